// libkring: everything, for applications that want one include.
#pragma once

#include "kring/aux.hpp"
#include "kring/barrier.hpp"
#include "kring/channel.hpp"
#include "kring/device.hpp"
#include "kring/merger.hpp"
#include "kring/perf.hpp"
#include "kring/poller.hpp"
#include "kring/reader.hpp"
#include "kring/result.hpp"
#include "kring/ring.hpp"
