# Sourced by scripts/install-deps.sh and scripts/check-deps.sh.
# convlab_packages [FILE]: the package names of FILE (default scripts/deps.txt),
# one a line, `notebooks:` lines only when CONVLAB_WITH_NOTEBOOKS=1 (default 1).
convlab_packages() {
  local file=${1:-$(dirname "${BASH_SOURCE[0]}")/deps.txt}
  [ -r "$file" ] || { echo "error: cannot read package list '$file'" >&2; return 2; }
  local notebooks=${CONVLAB_WITH_NOTEBOOKS:-1}
  sed -e 's/#.*//' "$file" | while read -r line; do
    case $line in
      notebooks:*) [ "$notebooks" = 1 ] && printf '%s\n' ${line#notebooks:} ;;
      *) [ -n "$line" ] && printf '%s\n' $line ;;
    esac
  done
  return 0
}
