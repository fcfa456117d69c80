# shellcheck shell=bash
# Reads autograders/course-tree.txt, the one list of what a course tree contains, for the
# packagers (prepare.sh, scripts/export-learner.sh, scripts/package-gradescope.sh).
# Sourced, not run.

course_tree_list="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/course-tree.txt"

# course_tree_paths: the paths the tree contains, one a line.
course_tree_paths() {
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$course_tree_list" | grep -v -e '^$' -e '^!'
}

# course_tree_excluded: the paths taken back out, one a line.
course_tree_excluded() {
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$course_tree_list" | sed -n 's/^!//p'
}

# course_tree_pathspecs: the list as pathspecs for `git ls-files`, one a line.
course_tree_pathspecs() {
  local p
  course_tree_paths
  while IFS= read -r p; do
    printf ':!:%s\n:!:%s/**\n' "$p" "$p"
  done < <(course_tree_excluded)
}

# course_tree_copy FROM TO: copies the tree from the course at FROM into the folder TO.
# Fails, saying which, when FROM lacks a path of the list.
course_tree_copy() {
  local from="$1" to="$2" p
  while IFS= read -r p; do
    if [ ! -e "$from/$p" ]; then
      echo "$from/$p is missing: not a course tree ($course_tree_list)" >&2
      return 2
    fi
    mkdir -p "$to/$(dirname "$p")" && cp -R "$from/$p" "$to/$(dirname "$p")/" || return 1
  done < <(course_tree_paths)
  local x
  while IFS= read -r p; do
    # $p unquoted: a "*" in it is a pattern (a path with no match stays as it is).
    for x in "${to:?}"/$p; do rm -rf "$x" || return 1; done
  done < <(course_tree_excluded)
}
