#!/usr/bin/env bash
# Fails when `npm install` in a fresh clone would rewrite package-lock.json.
#
# Copies package.json and package-lock.json into an empty directory and runs `npm install` there
# (scripts off, packages from npm's cache), then compares the lockfile it leaves with the committed
# one. The install must extract every package: npm learns some lockfile fields only from a
# package's files, e.g. `hasInstallScript` of a package that ships a binding.gyp and no install
# script (better-sqlite3 13), so neither `npm install --package-lock-only` nor an install over an
# existing node_modules notices them.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp package.json package-lock.json "$scratch/"
[ -f .npmrc ] && cp .npmrc "$scratch/"
(cd "$scratch" && npm install --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null)
if ! diff -u package-lock.json "$scratch/package-lock.json"; then
  echo "package-lock.json is not what npm install writes in a fresh clone (diff above): run npm install in a fresh clone and commit its package-lock.json" >&2
  exit 1
fi
echo "package-lock.json is what npm install writes in a fresh clone"
