#include "judge/adapter_rules.hpp"

#include <map>

namespace course {

const AdapterRules* adapter_rules(const std::string& adapter) {
  static const std::map<std::string, const AdapterRules*> by_name = [] {
    std::map<std::string, const AdapterRules*> t;
    for (const StageAdapterRules& stage : stage_adapter_rules())
      for (const AdapterRules& r : stage.rules()) t.emplace(r.name, &r);
    return t;
  }();
  auto it = by_name.find(adapter);
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace course
