// IBF_ASSERT_ON_THREAD (ibf/thread_owner.h), forced on as in a debug or sanitizer build.
#define IBF_THREAD_CHECKS 1
#include "ibf/thread_owner.h"

#include <gtest/gtest.h>

#include <thread>

namespace {

void io_only(const ibf::ThreadOwner& io) { IBF_ASSERT_ON_THREAD(io); }

TEST(ThreadOwner, AcceptsItsOwnThreadAndAnyThreadWhileUnbound) {
    ibf::ThreadOwner io{"io"};
    std::thread([&] { io_only(io); }).join();  // unbound: construction and shutdown
    io.bind();
    io_only(io);
    EXPECT_TRUE(io.on_owner());
    bool other = true;
    std::thread([&] { other = io.on_owner(); }).join();
    EXPECT_FALSE(other);
    io.release();
    std::thread([&] { other = io.on_owner(); }).join();
    EXPECT_TRUE(other);
}

TEST(ThreadOwnerDeathTest, FiresOffTheOwnerThreadNamingTheOwnerAndTheFunction) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ibf::ThreadOwner io{"io"};
    io.bind();
    EXPECT_DEATH(std::thread([&] { io_only(io); }).join(),
                 "thread_owner_test.cpp:[0-9]+: io_only runs off the io thread");
}

}  // namespace
