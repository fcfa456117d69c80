#include "judge/variants.hpp"

namespace fs = std::filesystem;

namespace course {

fs::path mistakes_dir(const fs::path& stages_dir, const Stage& stage) {
  return stages_dir / stage.folder / "mistakes";
}

fs::path golden_dir(const fs::path& stages_dir, const Stage& stage) {
  return stages_dir / stage.folder / "golden";
}

std::vector<VariantFile> stage_variant_files(const fs::path& stages_dir,
                                             const std::vector<Stage>& stages) {
  std::vector<VariantFile> out;
  for (const Stage& stage : stages) {
    const fs::path dir = mistakes_dir(stages_dir, stage);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (VariantFile& v : read_variant_files(dir)) {
      if (v.stage != stage.slug)
        throw VariantFileError(v.path.string() + ": says \"stage: " + v.stage +
                               "\", but it is in the folder of " + stage.slug);
      for (const VariantFile& earlier : out)
        if (v.mistake && earlier.mistake && earlier.id == v.id && earlier.parameter == v.parameter)
          throw VariantFileError(v.path.string() + ": " + earlier.name + " already has diagnosis " +
                                 v.id +
                                 (v.parameter.empty() ? "" : " with parameter " + v.parameter));
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace course
