#!/usr/bin/env bash
# Newer binutils, run unpacked: fetch by package name from Debian's archive,
# unpack without installing, and write wrappers that run each tool under that
# release's own dynamic linker.
#
#   tools/toolchains.sh            fetch (once) into the cache and print its path
#   tools/toolchains.sh --check    exit 0 when the cache is complete, 1 otherwise
#
# The cache (SFVIEW_TOOLCHAINS, default ~/.cache/sfview/toolchains) holds one
# folder per Debian suite:
#
#   trixie/   binutils 2.44 (SFrame version 2)
#   sid/      the newest binutils (2.47.x: version 3, s390x)
#
# and in each:
#
#   root/                      the packages, dpkg -x'd
#   VERSION                    the binutils version (e.g. 2.44)
#   bin/<target>/{as,ld,readelf,objdump,objcopy,strip}
#                              wrappers; <target> is x86_64, aarch64 or s390x.
#                              `gcc -B bin/x86_64/ -Wa,--gsframe` (or
#                              aarch64-linux-gnu-gcc, s390x-linux-gnu-gcc)
#                              assembles and links with that release.
#   libsframe.so               that release's libsframe (a link into root/)
#   run                        runs any program under the release's dynamic
#                              linker and libraries (for loading its libsframe)
#
# and, for building real code with each release, Debian's source packages in
# src/<package>/ (SOURCE_PACKAGES below: unpacked, not built).
#
# Other producers, from sid, in llvm/ (LLVM_VERSION below: the newest clang,
# which writes SFrame version 2 with -Wa,--gsframe,--allow-experimental-sframe):
#
#   root/                      clang, lld, mold and their libraries, dpkg -x'd
#   VERSION                    "clang 23.1.4, lld 23.1.4, mold 3.0.0"
#   bin/clang                  clang under sid's dynamic linker, its resource
#                              folder given (through the loader it cannot
#                              find itself)
#   bin/lld/ld.lld             for `gcc -B bin/lld/ -fuse-ld=lld`
#   bin/mold/ld.mold           for `gcc -B bin/mold/ -fuse-ld=mold`
#
# and glibc's SFrame reader for tests/glibc_harness.c, from Debian's glibc-source
# package (GLIBC below: the .deb's source tarball, only the files the harness
# compiles):
#
#   glibc-<version>/sysdeps/generic/{sframe-read.c,sframe-read.h,sframe.c,sframe.h,uw-sigframe.h}
#
# To make more: add a suite to SUITES below with its libsframe package name.
# Tests find the cache through tests/toolchains.py; CI runs this script first.
set -euo pipefail

CACHE=${SFVIEW_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/sfview/toolchains}
MIRROR=${SFVIEW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# suite -> the libsframe package that suite's binutils links against
declare -A SUITES=([trixie]=libsframe1 [sid]=libsframe3)
TARGETS=(x86-64 aarch64 s390x)
TOOLS=(as ld readelf objdump objcopy strip)
SOURCE_PACKAGES=(zlib bzip2 lua5.4)
LLVM_VERSION=23
# glibc-source version -> the suites that may carry it (sid until a newer glibc replaces it, then testing)
declare -A GLIBC=([2.43]="sid forky")

complete() { [ -s "$CACHE/$1/VERSION" ] && [ -x "$CACHE/$1/bin/s390x/readelf" ]; }
glibc_complete() { for v in "${!GLIBC[@]}"; do [ -f "$CACHE/glibc-$v/.done" ] || return 1; done; }
sources_complete() { for p in "${SOURCE_PACKAGES[@]}"; do [ -f "$CACHE/src/$p/.done" ] || return 1; done; }
llvm_complete() { [ -s "$CACHE/llvm/VERSION" ] && [ -x "$CACHE/llvm/bin/mold/ld.mold" ]; }

if [ "${1-}" = "--check" ]; then
  for suite in "${!SUITES[@]}"; do complete "$suite" || exit 1; done
  sources_complete || exit 1
  llvm_complete || exit 1
  glibc_complete || exit 1
  exit 0
fi

apt_options() { # the private apt state of one folder: sources list, lists, cache; nothing of the host's
  echo -o "Dir::Etc::SourceList=$1/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o "Dir::State::Lists=$1/lists" -o "Dir::Cache=$1" -o Dir::State::status=/dev/null \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root
}

fetch_sources() {
  local work="$CACHE/src/apt"
  mkdir -p "$work/lists/partial" "$work/archives/partial"
  echo "deb-src [trusted=yes] $MIRROR bookworm main" >"$work/sources.list"
  # shellcheck disable=SC2046
  apt-get $(apt_options "$work") -qq update
  for p in "${SOURCE_PACKAGES[@]}"; do
    [ -f "$CACHE/src/$p/.done" ] && continue
    rm -rf "$CACHE/src/$p" "$work/dl" && mkdir -p "$work/dl"
    # shellcheck disable=SC2046
    (cd "$work/dl" && apt-get $(apt_options "$work") -qq source --download-only "$p" 2>/dev/null)
    mkdir -p "$CACHE/src/$p"
    tar -xf "$(ls "$work"/dl/*.orig.tar.* | head -n 1)" -C "$CACHE/src/$p" --strip-components=1
    touch "$CACHE/src/$p/.done"
  done
  rm -rf "$work/dl"
}

fetch_glibc() { # glibc-source's tarball, only the SFrame reader's files
  local version=$1 suites=$2 work="$CACHE/glibc-$1.apt" suite
  mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/dl"
  : >"$work/sources.list"
  for suite in $suites; do echo "deb [trusted=yes] $MIRROR $suite main" >>"$work/sources.list"; done
  local apt
  read -r -a apt <<<"$(apt_options "$work")"
  apt-get "${apt[@]}" -qq update
  local exact
  exact=$(apt-cache "${apt[@]}" madison glibc-source | awk -v v="$version" '$3 ~ "^"v"-" {print $3; exit}')
  [ -n "$exact" ] || { echo "glibc-source $version is in none of: $suites" >&2; return 1; }
  (cd "$work/dl" && apt-get "${apt[@]}" -qq download "glibc-source=$exact")
  rm -rf "$work/x" "$CACHE/glibc-$version" && mkdir -p "$work/x" "$CACHE/glibc-$version"
  dpkg -x "$work"/dl/glibc-source_*.deb "$work/x"
  tar -xJf "$work/x/usr/src/glibc/glibc-$version.tar.xz" -C "$CACHE/glibc-$version" --strip-components=1 \
    "glibc-$version/sysdeps/generic/sframe-read.c" "glibc-$version/sysdeps/generic/sframe-read.h" \
    "glibc-$version/sysdeps/generic/sframe.c" "glibc-$version/sysdeps/generic/sframe.h" \
    "glibc-$version/sysdeps/generic/uw-sigframe.h"
  echo "$exact" >"$CACHE/glibc-$version/DEBIAN_VERSION"
  touch "$CACHE/glibc-$version/.done"
  rm -rf "$work"
  echo "glibc-source $exact in $CACHE/glibc-$version" >&2
}

fetch() {
  local suite=$1 libsframe=$2 dir="$CACHE/$1"
  local work="$dir/apt"
  mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/debs"
  echo "deb [trusted=yes] $MIRROR $suite main" >"$work/sources.list"
  local apt
  read -r -a apt <<<"$(apt_options "$work")"
  apt-get "${apt[@]}" -qq update
  local pkgs=(binutils-common libbinutils libctf0 libctf-nobfd0 libgprofng0 libjansson4 "$libsframe"
    libc6 libzstd1 zlib1g libgcc-s1 libstdc++6)
  for t in "${TARGETS[@]}"; do pkgs+=("binutils-$t-linux-gnu"); done
  (cd "$work/debs" && apt-get "${apt[@]}" -qq download "${pkgs[@]}")
  rm -rf "$dir/root"
  for deb in "$work/debs"/*.deb; do dpkg -x "$deb" "$dir/root"; done

  local root="$dir/root" libdir="$dir/root/usr/lib/x86_64-linux-gnu"
  local loader="$root/usr/lib64/ld-linux-x86-64.so.2"
  [ -e "$loader" ] || loader="$root/lib64/ld-linux-x86-64.so.2"
  cat >"$dir/run" <<EOF
#!/bin/sh
# Runs a program under binutils' $suite C library (its own dynamic linker).
exec "$loader" --library-path "$libdir" "\$@"
EOF
  chmod +x "$dir/run"
  for t in "${TARGETS[@]}"; do
    local name=${t//-/_}
    mkdir -p "$dir/bin/$name"
    for tool in "${TOOLS[@]}"; do
      cat >"$dir/bin/$name/$tool" <<EOF
#!/bin/sh
exec "$dir/run" "$root/usr/bin/$name-linux-gnu-$tool" "\$@"
EOF
      chmod +x "$dir/bin/$name/$tool"
    done
  done
  ln -sf "$(ls "$libdir"/libsframe.so.* | head -n 1)" "$dir/libsframe.so"
  local version
  version=$("$dir/bin/x86_64/readelf" --version | head -n 1 | sed -E 's/.* ([0-9]+\.[0-9]+).*/\1/')
  for t in "${TARGETS[@]}"; do "$dir/bin/${t//-/_}/as" --version >/dev/null; done
  echo "$version" >"$dir/VERSION"
  rm -rf "$work/debs" "$work/archives"
  echo "$suite: binutils $(cat "$dir/VERSION") in $dir" >&2
}

fetch_llvm() { # clang, lld and mold from sid, unpacked, with wrappers (see the top of this file)
  local dir="$CACHE/llvm" v=$LLVM_VERSION
  local work="$dir/apt"
  mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/debs"
  echo "deb [trusted=yes] $MIRROR sid main" >"$work/sources.list"
  local apt
  read -r -a apt <<<"$(apt_options "$work")"
  apt-get "${apt[@]}" -qq update
  local pkgs=("clang-$v" "libclang-cpp$v" "libllvm$v" "libclang-common-$v-dev" "lld-$v" mold
    libedit2 libffi8 libmimalloc3 libxml2-16 libz3-4 libzstd1 zlib1g libc6 libgcc-s1 libstdc++6 libbsd0 libmd0
    libtinfo6)
  (cd "$work/debs" && apt-get "${apt[@]}" -qq download "${pkgs[@]}")
  rm -rf "$dir/root" "$dir/bin"
  for deb in "$work/debs"/*.deb; do dpkg -x "$deb" "$dir/root"; done
  local root="$dir/root" llvm="$dir/root/usr/lib/llvm-$v"
  local loader="$root/usr/lib64/ld-linux-x86-64.so.2"
  local libs="$root/usr/lib/x86_64-linux-gnu:$llvm/lib"
  mkdir -p "$dir/bin/lld" "$dir/bin/mold"
  printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" -resource-dir "%s" "$@"\n' \
    "$loader" "$libs" "$llvm/bin/clang-$v" "$(ls -d "$llvm"/lib/clang/* | head -n 1)" >"$dir/bin/clang"
  printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' "$loader" "$libs" "$llvm/bin/ld.lld" >"$dir/bin/lld/ld.lld"
  printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' "$loader" "$libs" "$root/usr/bin/mold" \
    >"$dir/bin/mold/ld.mold"
  chmod +x "$dir/bin/clang" "$dir/bin/lld/ld.lld" "$dir/bin/mold/ld.mold"
  local clang lld mold
  clang=$("$dir/bin/clang" --version | head -n 1 | sed -E 's/.*version ([0-9.]+).*/\1/')
  lld=$("$dir/bin/lld/ld.lld" --version | sed -E 's/.*LLD ([0-9.]+).*/\1/')
  mold=$("$dir/bin/mold/ld.mold" --version | sed -E 's/^mold ([0-9.]+).*/\1/')
  echo "clang $clang, lld $lld, mold $mold" >"$dir/VERSION"
  rm -rf "$work/debs" "$work/archives"
  echo "llvm: $(cat "$dir/VERSION") in $dir" >&2
}

for suite in "${!SUITES[@]}"; do
  complete "$suite" || fetch "$suite" "${SUITES[$suite]}"
done
sources_complete || fetch_sources
llvm_complete || fetch_llvm
# (not fatal: without it only tests/oracles/test_glibc.py skips, saying so)
for v in "${!GLIBC[@]}"; do
  [ -f "$CACHE/glibc-$v/.done" ] || fetch_glibc "$v" "${GLIBC[$v]}" || echo "glibc-source $v not fetched" >&2
done
echo "$CACHE"
