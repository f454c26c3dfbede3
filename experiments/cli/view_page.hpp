// The page of `fraglab view`: one HTML file, its style and script inline, that reads the data
// (experiments/runtime/inspect/view_data.hpp) from a JSON element and draws, for each policy side by
// side on one time axis, its bytes over time, its address space over time and its state at
// the event the slider points at. It fetches nothing.
#pragma once

#include <string>

namespace fraglab::cli {

// `data` is view_data_json()'s; `made_by` says what made the page; `preface`, HTML shown above
// the charts (`fraglab explain`'s answer).
std::string view_page(std::string const& data, std::string const& made_by, std::string const& preface = {});

}  // namespace fraglab::cli
