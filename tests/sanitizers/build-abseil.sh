#!/usr/bin/env bash
# build-abseil.sh PREFIX: builds Debian's own Abseil (the source package of the installed
# libabsl-dev: same version, same Debian patches and options) with -fsanitize=thread and
# installs it, static, into PREFIX, with one fix for a false report inside Abseil
# (abseil-tsan.patch says which). scripts/build-check.sh tsan uses it:
# Debian's binary Abseil is built without ThreadSanitizer, so TSan cannot see absl::Mutex and
# absl::CondVar synchronize (they use atomics and futex calls inside the uninstrumented library)
# and reports races that are not there. Done once per build folder: a PREFIX that holds a
# finished build with the same version and flags is kept.
#
# The source comes from Debian's archive through apt (deb-src entries in a private apt
# configuration under PREFIX.work, so the machine's apt sources are left alone).
set -euo pipefail
prefix=$1
flags=-fsanitize=thread
work=$prefix.work
patch_file=$(cd "$(dirname "$0")" && pwd)/abseil-tsan.patch

version=$(dpkg-query -W -f='${Version}' libabsl-dev)
stamp="abseil $version, CXXFLAGS $flags -fno-omit-frame-pointer, $(sha256sum <"$patch_file" | cut -c1-16)"
marker=$prefix/lib/cmake/absl/pgflow-tsan-instrumented
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$stamp" ]; then
  exit 0
fi
echo "build-abseil: building $stamp into $prefix" >&2

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if ! command -v dpkg-source >/dev/null; then
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
fi

rm -rf "$work" "$prefix"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache" "$work/src"
# shellcheck disable=SC1091
codename=$(. /etc/os-release && printf '%s' "$VERSION_CODENAME")
cat >"$work/apt/sources.list" <<EOF
deb-src http://deb.debian.org/debian $codename main
deb-src http://deb.debian.org/debian $codename-updates main
deb-src http://deb.debian.org/debian-security $codename-security main
EOF
apt_opts=(-o Dir::Etc::SourceList="$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache"
          -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" -qq update
(cd "$work/src" && apt-get "${apt_opts[@]}" -qq source --download-only "abseil=$version" >/dev/null)
dpkg-source --no-check -x "$work/src"/abseil_*.dsc "$work/src/abseil" >/dev/null
patch -d "$work/src/abseil" -p1 --quiet <"$patch_file"

# As debian/rules configures it (C++17, static), plus the sanitizer. No tests.
cmake -S "$work/src/abseil" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DBUILD_TESTING=OFF -DABSL_PROPAGATE_CXX_STD=ON \
  -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build "$work/build" -j"$(nproc)" >/dev/null
cmake --install "$work/build" >/dev/null
printf '%s\n' "$stamp" >"$marker"
rm -rf "$work"
echo "build-abseil: done" >&2
