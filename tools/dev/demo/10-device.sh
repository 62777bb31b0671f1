# The device and the module's ABI answer.
echo "\$ ls -l /dev/kring"
ls -l /dev/kring
echo "\$ kring info"
/kring/kring info || exit 1
