// Where the catalogue of mistakes lives: each stage's own folder (stages/manifest.json
// names it), stages/<folder>/mistakes/NAME.mistake and NAME.alternative, with the grader's
// text for each mistake beside it, stages/<folder>/golden/NAME.txt.
#pragma once

#include <filesystem>
#include <vector>

#include "judge/stages.hpp"
#include "wire/variant_file.hpp"

namespace course {

// stages_dir/<folder>/mistakes and .../golden of a stage (stages_dir: the course's stages/).
std::filesystem::path mistakes_dir(const std::filesystem::path& stages_dir, const Stage& stage);
std::filesystem::path golden_dir(const std::filesystem::path& stages_dir, const Stage& stage);

// Every .mistake and .alternative file of every stage of `stages` (in course order, then
// by name; a stage without a mistakes folder has none). Throws VariantFileError for a
// broken file, a file whose "stage:" is not the stage of its folder, or two mistakes with
// the same diagnosis and parameter.
std::vector<VariantFile> stage_variant_files(const std::filesystem::path& stages_dir,
                                             const std::vector<Stage>& stages);

}  // namespace course
