#include "judge/stage_fixtures.hpp"

#include <map>

namespace course {

void check_case_input(const Fixture& fixture) {
  try {
    check_adapter_input(fixture.adapter, fixture.input);
  } catch (const AdapterInputError& e) {
    throw FixtureError(fixture.file.string() + ": " + e.what());
  }
}

void check_case_output(const Fixture& fixture) {
  try {
    check_adapter_output(fixture.adapter, fixture.expected);
  } catch (const AdapterOutputError& e) {
    throw FixtureError(fixture.file.string() + ": the expected " + e.what());
  }
}

std::vector<Fixture> load_stage_fixtures(const std::filesystem::path& stage_dir,
                                         const std::string& slug, const std::string& only_case) {
  std::vector<Fixture> fixtures;
  std::string names;  // every case's, for a --case that names none
  try {
    std::map<std::string, std::filesystem::path> by_name;
    for (const auto& file : list_fixtures(stage_dir)) {
      Fixture fx = load_fixture(file);
      if (fx.stage != slug)
        throw FixtureError(file.string() + ": belongs to stage " +
                           json_excerpt(json(fx.stage), 60) + ", not \"" + slug + "\"");
      auto [earlier, fresh] = by_name.emplace(fx.name, file);
      if (!fresh)
        throw FixtureError(file.string() + ": case " + json_excerpt(json(fx.name), 60) +
                           " is also the case of " + earlier->second.string());
      check_case_input(fx);
      check_case_output(fx);
      names += (names.empty() ? "" : ", ") + fx.name;
      if (only_case.empty() || fx.name == only_case) fixtures.push_back(std::move(fx));
    }
  } catch (const FixtureError& e) {
    throw FixtureError(std::string("the course is broken: ") + e.what());
  }
  if (fixtures.empty())
    throw FixtureError("stage " + slug + " has no case named \"" + only_case +
                       "\". Its cases: " + names);
  return fixtures;
}

}  // namespace course
