// ErrorList: a bounded list of verification messages ("... and N more errors" at the end).
//
//   ErrorList errors(50);
//   errors.add("phase 0, message 1: ...");
//   std::vector<std::string> out = errors.take();
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cartplan::ir::halo {

class ErrorList {
 public:
  explicit ErrorList(std::size_t max) : max_(max) {}
  void add(std::string e) {
    if (list_.size() < max_) list_.push_back(std::move(e));
    else ++more_;
  }
  bool empty() const { return list_.empty(); }
  std::vector<std::string> take() {
    if (more_ > 0) list_.push_back("... and " + std::to_string(more_) + " more errors");
    more_ = 0;
    return std::move(list_);
  }

 private:
  std::size_t max_;
  std::size_t more_ = 0;
  std::vector<std::string> list_;
};

}  // namespace cartplan::ir::halo
