#!/usr/bin/env bash
# fetch-core.sh: fetches upstream pgflow's SQL core — the migrations in the npm package
# @pgflow/core — into a cache under the build tree, for pgflow_bench's section u (upstream's
# protocol), which finds it there by itself. Upstream's SQL is never committed to this
# repository: it is fetched at bench time only.
#
#   bench/upstream/fetch-core.sh [VERSION [CACHE_DIR]]
#       VERSION    default 0.14.1 (the release issue #30 compares with)
#       CACHE_DIR  default build-bench/upstream (scripts/bench.sh's build tree)
#
# Leaves CACHE_DIR/pgflow-core-VERSION/{package.json,migrations/*.sql} and prints that folder
# (pgflow_bench --upstream_sql=FOLDER uses any release). Needs npm; a cached release is not
# fetched again. Fails, naming the releases the registry offers, when VERSION is not there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=${1:-0.14.1}
cache=${2:-$root/build-bench/upstream}
dest=$cache/pgflow-core-$version

die() { echo "fetch-core.sh: $*" >&2; exit 1; }

if compgen -G "$dest/migrations/*.sql" >/dev/null; then
  echo "$dest"
  exit 0
fi
command -v npm >/dev/null || die "npm is not installed (Debian: apt-get install npm)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack "@pgflow/core@$version" >"$tmp/pack.log" 2>&1); then
  grep -m 2 "npm error" "$tmp/pack.log" >&2 || true
  offered=$(npm view @pgflow/core versions --json 2>/dev/null | tr -d ' \n' || true)
  die "npm could not fetch @pgflow/core@$version; the registry offers: ${offered:-?}"
fi
tar -xzf "$tmp"/pgflow-core-*.tgz -C "$tmp"
mapfile -t files < <(find "$tmp/package" -path '*migrations*' -name '*.sql' | sort)
[ "${#files[@]}" -gt 0 ] || die "@pgflow/core@$version holds no SQL migrations"

rm -rf "$dest.partial"
mkdir -p "$dest.partial/migrations"
cp "${files[@]}" "$dest.partial/migrations/"
cp "$tmp/package/package.json" "$dest.partial/"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "fetch-core.sh: ${#files[@]} migrations of @pgflow/core@$version" >&2
echo "$dest"
