#!/usr/bin/env bash
# Checks that setup.sh installs every external command the project's scripts run, so a fresh
# machine can run them: test.sh, run.sh, bench/run.sh, install.sh, .ci/run and every other
# tracked shell script (what they call), the sh blocks of README.md and docs/*.md, and the
# commands the bench/*.py scripts look for or run. A word of those scripts (comments left out) that is an
# executable on the system PATH must come from a Debian package that is Essential or of priority
# required, or that setup.sh lists, or that one of those depends on (two levels). Prints
# "//:setup_covers_tools PASSED" or "... FAILED" with each tool and its package; exit 1 on failure.
set -uo pipefail
cd "$(dirname "$0")/.."

# setup.sh's package list (the packages=( ... ) array).
eval "$(sed -n '/^packages=(/,/^)/p' setup.sh)"
if [ "${#packages[@]}" -eq 0 ]; then echo "//:setup_covers_tools FAILED (no packages=( ... ) list in setup.sh)"; exit 1; fi

deps_of() { dpkg-query -W -f='${Depends}, ${Pre-Depends}\n' "$1" 2>/dev/null | tr ',|' '\n\n' | sed 's/([^)]*)//; s/:any//; s/^ *//; s/ *$//' | grep -v '^$'; }
declare -A allowed=()
for p in "${packages[@]}"; do
  allowed[$p]=1
  for d in $(deps_of "$p"); do
    allowed[$d]=1
    for dd in $(deps_of "$d"); do allowed[$dd]=1; done
  done
done

scripts=$(git ls-files '*.sh' .ci/run)
text=$( { for f in $scripts; do sed -e 's/^[[:space:]]*#.*$//' -e 's/[[:space:]]#.*$//' "$f"; done
          awk '/^```sh$/ {b = 1; next} /^```$/ {b = 0} b' README.md docs/*.md
          grep -ohE 'shutil\.which\("[^"]+"\)|subprocess\.[a-z_]+\(\["[^"]+"' bench/*.py | grep -oE '"[^"]+"' | tr -d '"'
        } )
words=$(echo "$text" | tr -c 'A-Za-z0-9_.+-' '\n' | grep -E '^[a-z][a-z0-9_.+-]*$' | sort -u)

system_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
problems=()
checked=0
# Words that happen to name a program but are arguments in these scripts, not commands.
ignored=" opt red init file write node "   # bazel -c opt; gnuplot colour names; main_job.sh's "measured at init";
                                     # tests/smpi/run.sh's graph spec "file:..." and grep pattern "cannot write";
                                     # "per node" in grep patterns and messages (nodejs may be installed)
for w in $words; do
  case "$ignored" in *" $w "*) continue ;; esac
  case "$(type -t "$w" 2>/dev/null)" in builtin|keyword) continue ;; esac
  path=$(PATH=$system_path command -v "$w" 2>/dev/null) || continue
  [ "${path#/}" != "$path" ] || continue
  checked=$((checked + 1))
  # dpkg records some files under /bin or /sbin (merged /usr), and alternatives resolve elsewhere.
  owner=""
  for candidate in "$path" "/${path#/usr/}" "$(readlink -f "$path")"; do
    owner=$(dpkg -S "$candidate" 2>/dev/null | grep -v "^diversion " | head -n 1 | cut -d: -f1)
    [ -n "$owner" ] && break
  done
  if [ -z "$owner" ]; then
    problems+=("$w ($path belongs to no Debian package)")
    continue
  fi
  [ -n "${allowed[$owner]:-}" ] && continue
  base=$(dpkg-query -W -f='${Essential} ${Priority}' "$owner" 2>/dev/null)
  case "$base" in yes*|*required) continue ;; esac
  problems+=("$w (package $owner)")
done

if [ "${#problems[@]}" -eq 0 ]; then
  echo "//:setup_covers_tools PASSED ($checked commands checked)"
else
  echo "//:setup_covers_tools FAILED (not installed by setup.sh: ${problems[*]})"
  exit 1
fi
