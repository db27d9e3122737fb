# Shared by scripts/check-trixie.sh and scripts/make-deb.sh: running commands in a trixie root.
# Source it; `in_root ROOT CMD...` runs CMD as root inside ROOT with /proc, /dev and /sys
# mounted; every mount made is undone on exit (trap), also when a step fails.

# trixie_remove DIR: removes DIR, which may be (or have been) a root with /dev, /proc or /sys
# mounted in it: every mount below DIR is undone first (deepest first), and rm never crosses
# into another file system. (A plain `rm -rf` of a root whose /dev was still bind-mounted, e.g.
# after mmdebstrap was interrupted, deleted the host's device nodes: it happened once here.)
trixie_remove() {
  local d=$1 m
  [[ -e $d ]] || return 0
  d=$(realpath "$d")
  while read -r m; do umount -l "$m" 2>/dev/null || true; done < <(
    awk -v d="$d" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
  if awk -v d="$d" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "trixie root: $d still has mounts in it; not removed" >&2
    return 1
  fi
  rm -rf --one-file-system "$d"
}

TRIXIE_MOUNTS=()
trixie_umount_all() {
  local i
  for ((i = ${#TRIXIE_MOUNTS[@]} - 1; i >= 0; i--)); do
    umount -l "${TRIXIE_MOUNTS[i]}" 2>/dev/null || true
  done
  TRIXIE_MOUNTS=()
}

# trixie_mount ROOT: /proc, /dev (bind), /dev/pts, /sys, a fresh /tmp (tmpfs) in ROOT.
trixie_mount() {
  local root=$1
  [[ -x $root/usr/bin/apt-get && -f $root/.stagerack-root ]] \
    || { echo "trixie root: $root is missing or broken (no apt-get or no stamp): make it with scripts/trixie/root.sh" >&2; return 2; }
  mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc" && TRIXIE_MOUNTS+=("$root/proc"); }
  mountpoint -q "$root/dev" || { mount --bind /dev "$root/dev" && TRIXIE_MOUNTS+=("$root/dev"); }
  mountpoint -q "$root/dev/pts" || { mount --bind /dev/pts "$root/dev/pts" && TRIXIE_MOUNTS+=("$root/dev/pts"); }
  mountpoint -q "$root/sys" || { mount --bind /sys "$root/sys" && TRIXIE_MOUNTS+=("$root/sys"); }
  mountpoint -q "$root/tmp" || { mount -t tmpfs -o size=4g tmpfs "$root/tmp" && TRIXIE_MOUNTS+=("$root/tmp"); }
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

# in_root ROOT CMD...: CMD through bash -lc inside ROOT, a clean environment, Debian's Swift on PATH.
in_root() {
  local root=$1; shift
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/libexec/swift/bin \
    /bin/bash -c "$*"
}

# step NAME CMD...: runs CMD and prints how long it took; a failure ends the script.
STEP_TIMES=()
step() {
  local name=$1; shift
  local t0=$(date +%s)
  echo "== $name" >&2
  if ! "$@"; then
    echo "FAILED: $name ($(( $(date +%s) - t0 )) s)" >&2
    return 1
  fi
  STEP_TIMES+=("$(printf '%-44s %5d s' "$name" $(( $(date +%s) - t0 )))")
  echo "   $name: $(( $(date +%s) - t0 )) s" >&2
}

# copy_source DEST: the project's tracked and new (not ignored) files, mtimes kept.
copy_source() {
  local dest=$1
  trixie_remove "$dest"; mkdir -p "$dest"
  git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$dest"
}

# fresh_copy BASE: a throw-away copy of the root BASE (an overlay: BASE stays untouched),
# mounted; sets FRESH to its path. Unmounted by trixie_umount_all; its folder removed by
# trixie_fresh_cleanup.
FRESH=""; FRESH_DIRS=()
fresh_copy() {
  local base=$1 d
  d=$(mktemp -d /tmp/stagerack-trixie-fresh.XXXXXX)
  mkdir -p "$d"/{upper,work,merged}
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$d/upper,workdir=$d/work" "$d/merged" \
    || { echo "trixie root: cannot mount an overlay on $base (a fresh copy of the root is made that way)" >&2; trixie_remove "$d"; return 1; }
  TRIXIE_MOUNTS+=("$d/merged"); FRESH_DIRS+=("$d")
  FRESH=$d/merged
}
trixie_fresh_cleanup() {
  trixie_umount_all
  local d; for d in "${FRESH_DIRS[@]}"; do trixie_remove "$d"; done
  FRESH_DIRS=()
}

# compare_demos HOST_DIR OTHER_DIR LABEL RACK...: every RACK's demo render (NAME.wav and
# NAME-*.wav, as `render --demo` writes them) in HOST_DIR compared with the one in OTHER_DIR
# (another build's: trixie, arm64), measured with sox, never hashed: the peak of the difference
# in dBFS and both RMS levels. A rack of pure-Swift units passes when the difference is at most
# -120 dBFS; one with the synth (FluidSynth), the player (libsndfile's decoder) or an LV2 plugin
# (C libraries of other versions) when the RMS levels are within 0.5 dB. One line a file;
# returns 1 when any fails or is missing. Used by check-trixie.sh and check-arm64.sh.
compare_demos() {
  local hostdir=$1 otherdir=$2 label=$3; shift 3
  local fails=0 f name kind host other diff lh lo dd rack verdict
  printf '%-28s %-6s %14s %10s %10s %8s\n' file kind "diff (dBFS)" "host RMS" "$label RMS" "delta dB" >&2
  for rack in "$@"; do
    kind=swift
    grep -Eq '"type" *: *"(synth|player|lv2)"' "$rack" && kind=clib
    for f in "$hostdir/$(basename "$rack" .json).wav" "$hostdir/$(basename "$rack" .json)"-*.wav; do
      [[ -f $f ]] || continue
      name=$(basename "$f"); host=$f; other=$otherdir/$name
      [[ -f $other ]] || { echo "$name: no $label render" >&2; fails=$((fails + 1)); continue; }
      diff=$(sox -m -v 1 "$host" -v -1 "$other" -n stats 2>&1 | awk '/^Pk lev dB/ { print $4 }')
      lh=$(sox "$host" -n stats 2>&1 | awk '/^RMS lev dB/ { print $4 }')
      lo=$(sox "$other" -n stats 2>&1 | awk '/^RMS lev dB/ { print $4 }')
      dd=$(awk -v a="$lh" -v b="$lo" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.3f", d }')
      verdict=ok
      if [[ $kind == swift ]]; then
        awk -v d="$diff" 'BEGIN { exit !(d == "-inf" || d + 0 <= -120) }' || verdict=FAIL
      else
        awk -v d="$dd" 'BEGIN { exit !(d + 0 <= 0.5) }' || verdict=FAIL
      fi
      [[ $verdict == ok ]] || fails=$((fails + 1))
      printf '%-28s %-6s %14s %10s %10s %8s %s\n' "$name" "$kind" "$diff" "$lh" "$lo" "$dd" "$verdict" >&2
    done
  done
  echo "(swift: the difference at most -120 dBFS; clib: synth/player/LV2, the RMS level within 0.5 dB)" >&2
  return $((fails > 0))
}
