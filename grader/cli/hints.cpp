#include "cli/hints.hpp"

#include <algorithm>
#include <sstream>

#include "cli/progress.hpp"
#include "cli/view.hpp"
#include "judge/diagnose.hpp"
#include "judge/stages.hpp"

namespace course {

std::string hint_tier_name(int tier) {
  if (tier <= 1) return "the idea";
  if (tier == 2) return "the approach";
  return "near code";
}

std::string hint_title(const Stage& stage, int tier) {
  return "Hint " + std::to_string(tier) + " of " + std::to_string(stage.hints.size()) +
         " for stage " + std::to_string(stage.number) + ", " + stage.slug + ": " +
         hint_tier_name(tier);
}

std::vector<std::string> hint_body(const Stage& stage, int tier) {
  std::vector<std::string> lines;
  const size_t i = size_t(std::clamp(tier, 1, int(stage.hints.size()))) - 1;
  std::istringstream text(stage.hints[i]);
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  lines.push_back("");
  lines.push_back("Lesson: stages/" + stage.folder + "/lesson.md");
  return lines;
}

int open_next_hint(Progress& progress, const Stage& stage) {
  const int total = int(stage.hints.size());
  const int opened = progress.hints(stage);
  if (opened >= total) return total;
  progress.hints_opened[stage.slug] = opened + 1;
  return opened + 1;
}

void print_hint(std::ostream& out, const Stage& stage, int tier, bool again) {
  const int total = int(stage.hints.size());
  if (again) out << "Every hint of stage " << stage.number << " is open; the last one again.\n\n";
  out << hint_title(stage, tier) << "\n\n";
  for (const std::string& line : hint_body(stage, tier)) {
    if (line.empty()) {
      out << "\n";
      continue;
    }
    for (const std::string& part : wrap_text(line, 92, "  ", "    ")) out << part << "\n";
  }
  out << "\n";
  if (tier < total)
    out << (total - tier) << (total - tier == 1 ? " more tier" : " more tiers")
        << ": `build/bin/grader --hint --stage " << stage.slug << "` again opens the next.\n";
  else
    out << "That is the last tier of this stage's hints.\n";
}

std::string hint_offer(const Stage& stage, int tier, int opened) {
  const int total = int(stage.hints.size());
  if (tier < 1 || tier > total) return "";
  const std::string which = "hint " + std::to_string(tier) + " of " + std::to_string(total) + " (" +
                            hint_tier_name(tier) + ")";
  if (tier <= opened) return which + ", already open, covers this";
  return which + " covers this: `h` in watch mode, or `build/bin/grader --hint --stage " +
         stage.slug + "`, opens the hints one tier at a time";
}

std::string hint_offer(const Diagnosis& mistake, const Progress& progress) {
  for (const Stage& s : stage_table())
    if (mistake.lesson.rfind("stages/" + s.folder + "/lesson.md#", 0) == 0)
      return hint_offer(s, mistake.hint, progress.hints(s));
  return "";
}

}  // namespace course
