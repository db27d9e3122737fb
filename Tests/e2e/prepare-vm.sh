#!/usr/bin/env bash
# Prepare the cached pieces the e2e VM needs (see Tests/e2e/README.md):
#   .build/vm/vmlinux            uncompressed Debian kernel (booted through PVH)
#   .build/vm/initramfs.cpio.gz  busybox + ALSA/9p/overlay modules + /init
#   .build/vm/kver               the kernel version
# Idempotent: when everything is cached it only checks files and returns.
# Environment: E2E_VM_DIR overrides the cache folder; E2E_FORCE=1 rebuilds.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
VM_DIR=${E2E_VM_DIR:-$REPO_ROOT/.build/vm}

# Modules loaded by the guest /init (their dependencies are added, in order).
MODULES=(virtio_pci 9pnet_virtio 9p overlay snd-aloop snd-virmidi snd-seq-dummy snd-seq-midi snd-hrtimer)
PACKAGES=(qemu-system-x86 busybox-static cpio kmod xz-utils alsa-utils)

log() { printf '[prepare-vm] %s\n' "$*" >&2; }
die() { printf '[prepare-vm] ERROR: %s\n' "$*" >&2; exit 1; }

# Identifies the layout of the initramfs: the /init script and module list are
# generated from this file, so any edit here rebuilds the initramfs.
SELF_HASH=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)

cache_complete() {
    [[ -s $VM_DIR/vmlinux && -s $VM_DIR/initramfs.cpio.gz && -s $VM_DIR/kver && -s $VM_DIR/stamp ]] || return 1
    [[ $(cat "$VM_DIR/stamp") == "$SELF_HASH $(cat "$VM_DIR/kver")" ]] || return 1
    missing_packages >/dev/null && return 1
    return 0
}

# Prints the packages that are not installed; succeeds if there is at least one.
missing_packages() {
    local p st missing=()
    for p in "${PACKAGES[@]}"; do
        st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        [[ $st == "install ok installed" ]] || missing+=("$p")
    done
    ((${#missing[@]})) || return 1
    printf '%s\n' "${missing[@]}"
}

if [[ ${E2E_FORCE:-0} != 1 ]] && cache_complete; then
    log "cache complete in $VM_DIR ($(cat "$VM_DIR/kver")), nothing to do"
    exit 0
fi

mkdir -p "$VM_DIR"
exec 9>"$VM_DIR/.prepare.lock"
flock 9 || die "cannot lock $VM_DIR/.prepare.lock"
# Another prepare may have finished while we waited for the lock.
if [[ ${E2E_FORCE:-0} != 1 ]] && cache_complete; then
    log "cache complete in $VM_DIR ($(cat "$VM_DIR/kver")), nothing to do"
    exit 0
fi

# ---------------------------------------------------------------- packages
if mapfile -t missing < <(missing_packages); ((${#missing[@]})); then
    ((EUID == 0)) || die "missing packages (${missing[*]}); run as root or install them: apt-get install ${missing[*]}"
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
        log "apt-get install failed, running apt-get update and retrying"
        apt-get update -q >&2 || die "apt-get update failed (is the Debian mirror reachable?)"
        apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
            || die "apt-get install ${missing[*]} failed"
    fi
fi
[[ -x /bin/busybox ]] && file_is_static=$(LC_ALL=C ldd /bin/busybox 2>&1 || true)
[[ ${file_is_static:-} == *"not a dynamic executable"* ]] \
    || die "/bin/busybox is missing or not static (package busybox-static)"

# ---------------------------------------------------------------- kernel
KDIR=$VM_DIR/kernel
if [[ ${E2E_FORCE:-0} == 1 || ! -s $KDIR/vmlinux || ! -s $KDIR/kver ]]; then
    rm -rf "$KDIR" "$VM_DIR/kernel.tmp"
    tmp=$VM_DIR/kernel.tmp
    mkdir -p "$tmp/dl"
    # awk reads to the end (no `exit`): a reader that leaves early kills apt-cache with
    # SIGPIPE, which fails the assignment under pipefail.
    kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ && !found { print $2; found = 1 }')
    if [[ -z $kpkg ]]; then
        log "apt-cache knows no linux-image-amd64 yet, running apt-get update"
        apt-get update -q >&2 || die "apt-get update failed (is the Debian mirror reachable?)"
        kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ && !found { print $2; found = 1 }')
    fi
    [[ -n $kpkg ]] || die "cannot find the kernel image package that linux-image-amd64 depends on"
    log "downloading $kpkg"
    chmod 0777 "$tmp/dl"   # lets apt's _apt user write there (no "unsandboxed" warning)
    (cd "$tmp/dl" && apt-get download -q "$kpkg" >&2) || die "apt-get download $kpkg failed"
    deb=$(ls "$tmp"/dl/*.deb)
    log "extracting $(basename "$deb")"
    dpkg-deb -x "$deb" "$tmp/root" || die "dpkg-deb -x $deb failed"
    mods=
    for d in "$tmp"/root/lib/modules/*/ "$tmp"/root/usr/lib/modules/*/; do
        [[ -d $d ]] && { mods=${d%/}; break; }
    done
    [[ -n $mods ]] || die "no lib/modules/KVER in $deb"
    kver=$(basename "$mods")
    if [[ $mods == "$tmp/root/usr/lib/modules/"* && ! -e $tmp/root/lib ]]; then
        ln -s usr/lib "$tmp/root/lib"   # modprobe -d looks in ROOT/lib/modules
    fi
    depmod -b "$tmp/root" "$kver" || die "depmod failed for $kver"

    vmlinuz=$tmp/root/boot/vmlinuz-$kver
    [[ -s $vmlinuz ]] || die "no $vmlinuz in $deb"
    log "extracting vmlinux from vmlinuz-$kver"
    found=0
    # Try every XZ stream magic (FD 37 7A 58 5A 00) until one decompresses to an ELF.
    while IFS=: read -r off _; do
        # (not a pipe: xz stops at the stream end, tail then dies of SIGPIPE under pipefail)
        if xz -dc --single-stream < <(tail -c +$((off + 1)) "$vmlinuz" 2>/dev/null) >"$tmp/vmlinux" 2>/dev/null \
            && [[ $(head -c4 "$tmp/vmlinux" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; then
            found=1
            break
        fi
    done < <(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$vmlinuz" || true)
    ((found)) || die "could not find an XZ-compressed ELF kernel in $vmlinuz"
    echo "$kver" >"$tmp/kver"
    rm -rf "$tmp/dl"
    mv "$tmp" "$KDIR"
fi
kver=$(cat "$KDIR/kver")
KROOT=$KDIR/root

# ---------------------------------------------------------------- initramfs
log "building initramfs for $kver"
IR=$VM_DIR/initramfs.tmp
rm -rf "$IR"
mkdir -p "$IR"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,lower,rw,newroot,modules}
cp /bin/busybox "$IR/bin/busybox"

# Module order, from modprobe's own dependency resolution (insmod lines only).
depends=$(modprobe -d "$KROOT" -S "$kver" --show-depends -a "${MODULES[@]}") \
    || die "modprobe --show-depends failed for: ${MODULES[*]}"
order=()
declare -A seen=()
while read -r kw path opts; do
    [[ $kw == insmod ]] || continue
    [[ -z ${seen[$path]:-} ]] || continue
    seen[$path]=1
    name=$(basename "$path")
    case $name in
        *.ko.xz)  xz -dc "$path" >"$IR/modules/${name%.xz}"; name=${name%.xz} ;;
        *.ko.zst) zstd -qdc "$path" >"$IR/modules/${name%.zst}"; name=${name%.zst} ;;
        *.ko.gz)  gzip -dc "$path" >"$IR/modules/${name%.gz}"; name=${name%.gz} ;;
        *.ko)     cp "$path" "$IR/modules/$name" ;;
        *) die "unexpected module file $path" ;;
    esac
    order+=("$name${opts:+ $opts}")
done <<<"$depends"
((${#order[@]})) || die "no modules to load (modprobe output: $depends)"
printf '%s\n' "${order[@]}" >"$IR/modules/order"
log "modules: $(cut -d' ' -f1 "$IR/modules/order" | sed 's/\.ko$//' | tr '\n' ' ')"

cat >"$IR/init" <<'INIT'
#!/bin/busybox sh
# e2e guest init: load modules, overlay the host root, run the command, power off.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
msg() { echo "[e2e-init] $*"; }
fail() { msg "FATAL: $*"; [ -n "$SHARE" ] && [ -d "/newroot$SHARE" ] && echo "init: $*" >"/newroot$SHARE/init-error" && sync; poweroff -f; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

SHARE=; CMD=; WORKDIR=
for arg in $(cat /proc/cmdline); do
    case $arg in
        share=*) SHARE=${arg#share=} ;;
        work=*) WORKDIR=${arg#work=} ;;
        cmd=*) CMD=${arg#cmd=} ;;
    esac
done

while read -r mod opts; do
    insmod "/modules/$mod" $opts || msg "warning: insmod $mod failed"
done </modules/order

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower \
    || fail "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot \
    || fail "cannot mount the overlay root"
N=/newroot
mount -t proc proc $N/proc
mount -t sysfs sysfs $N/sys
mount -t devtmpfs devtmpfs $N/dev
mkdir -p $N/dev/pts $N/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $N/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $N/dev/shm
mount -t tmpfs -o mode=0755 tmpfs $N/run
mount -t tmpfs -o mode=1777 tmpfs $N/tmp
# A working folder under /tmp or /run (hidden by the fresh tmpfs) comes as its own share.
if [ -n "$WORKDIR" ]; then
    mkdir -p "$N$WORKDIR"
    mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose work "$N$WORKDIR" \
        || fail "cannot mount the working folder (9p tag work) at $WORKDIR"
fi
[ -n "$SHARE" ] || fail "no share= on the kernel command line"
mkdir -p "$N$SHARE"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none share "$N$SHARE" \
    || fail "cannot mount the share (9p tag share) at $SHARE"
[ -n "$CMD" ] && [ -f "$N$CMD" ] || fail "command script '$CMD' not found in the share"

SH=/bin/sh
[ -x $N/bin/bash ] && SH=/bin/bash
chroot $N /usr/bin/env -i \
    PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root TERM=dumb LANG=C.UTF-8 E2E_SHARE="$SHARE" E2E_IN_VM=1 \
    $SH "$CMD" </dev/console >/dev/console 2>&1
status=$?
echo "$status" >"$N$SHARE/exit-status.tmp" && mv "$N$SHARE/exit-status.tmp" "$N$SHARE/exit-status"
sync
umount "$N$SHARE" 2>/dev/null
poweroff -f
INIT
chmod +x "$IR/init"

(cd "$IR" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet | gzip -1 >"$VM_DIR/initramfs.cpio.gz.tmp") \
    || die "cannot build the initramfs archive"
mv "$VM_DIR/initramfs.cpio.gz.tmp" "$VM_DIR/initramfs.cpio.gz"
rm -rf "$IR"
ln -f "$KDIR/vmlinux" "$VM_DIR/vmlinux"
echo "$kver" >"$VM_DIR/kver"
echo "$SELF_HASH $kver" >"$VM_DIR/stamp"
log "ready: $VM_DIR/vmlinux ($kver), $VM_DIR/initramfs.cpio.gz ($(du -h "$VM_DIR/initramfs.cpio.gz" | cut -f1))"
