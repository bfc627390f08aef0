// The check queue's overflow policy, kept apart from the daemon's threads so it is tested alone.
// The queue holds at most `max` jobs; a job pushed onto a full queue drops the OLDEST queued job:
// newer jobs carry newer generations, and publish() ignores a result older than one already shown,
// so the oldest job is the one whose result would matter least.
//
//   std::deque<WorkItem> q;
//   if (auto old = ibf::push_dropping_oldest(q, std::move(item), 8)) warn(old->job.snapshot->sweep_seq);
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

namespace ibf {

// Appends `item`; when `q` already holds `max` (>= 1) items, first removes and returns the oldest.
template <class T>
std::optional<T> push_dropping_oldest(std::deque<T>& q, T item, size_t max) {
    std::optional<T> dropped;
    if (q.size() >= max) {
        dropped = std::move(q.front());
        q.pop_front();
    }
    q.push_back(std::move(item));
    return dropped;
}

}  // namespace ibf
