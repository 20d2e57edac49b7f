// check_golden(text, file): text must equal tests/golden/<file>; with
// SWITCHYARD_UPDATE_GOLDEN set, the file is rewritten from text instead.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

inline void check_golden(std::string const& text, char const* file) {
    std::string const path = std::string(SWITCHYARD_TEST_DIR) + "/golden/" + file;
    if (std::getenv("SWITCHYARD_UPDATE_GOLDEN")) std::ofstream(path) << text;
    std::ifstream in(path);
    std::stringstream stored;
    stored << in.rdbuf();
    INFO("emitted:\n" << text << "\n(set SWITCHYARD_UPDATE_GOLDEN=1 to rewrite " << path << ")");
    CHECK(text == stored.str());
}
