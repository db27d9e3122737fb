# Shared by the e2e scripts that run themselves in the VM (sourced on the host side):
# `run_in_vm NAME LOG_LINES SCRIPT ARGS...` builds the release stagerack (unless
# E2E_SKIP_BUILD), boots the VM with a fresh share folder, runs SCRIPT inside, shows the
# last LOG_LINES of its log on stderr (the E2E_ settings are passed to the guest) and prints its summary ("N passed, N failed"), or a
# failure line when it did not complete; then exits with the VM's status.
run_in_vm() {
    local name=$1 lines=$2 script=$3
    shift 3
    if [[ -z ${E2E_SKIP_BUILD:-} ]]; then
        (cd "$REPO" && swift build -c release --product stagerack 2>&1 | grep -Ev '^warning: prohibited' >&2; exit "${PIPESTATUS[0]}") || {
            echo "0 passed, 1 failed (release build failed)"; exit 1; }
    fi
    local vm_dir=${E2E_VM_DIR:-$REPO/.build/vm}
    mkdir -p "$vm_dir"
    local share
    share=$(mktemp -d "$vm_dir/share-XXXX")
    # The scripts' settings (E2E_PERIOD, E2E_LATENCY_PERIODS, E2E_DRIFT_PERIOD, ...) reach
    # the guest: every E2E_ variable set here but those that describe the host's side.
    local envs=() var
    for var in $(compgen -v E2E_); do
        case $var in E2E_IN_VM | E2E_SHARE | E2E_SKIP_BUILD | E2E_VM_DIR | E2E_TIMEOUT | E2E_KERNEL_ARGS) continue ;; esac
        envs+=(--env "$var=${!var}")
    done
    local rc=0
    "$SCRIPT_DIR/run-in-vm.sh" --timeout "${E2E_TIMEOUT:-600}" --share "$share" "${envs[@]}" -- "$script" "$@" || rc=$?
    if [[ -s $share/$name/summary ]]; then
        tail -n "$lines" "$share/$name/log" >&2 2>/dev/null || true
        cat "$share/$name/summary"
    else
        echo "0 passed, 1 failed (the $name run did not complete in the VM, status $rc; console: $share/console.log)"
        ((rc)) || rc=1
    fi
    exit "$rc"
}
