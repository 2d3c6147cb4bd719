#!/bin/sh
# lab-hook: the lab's exec preStop hook, installed in the image as /usr/local/bin/lab-hook.
#   lab-hook sleep <ms>   log hook-start, sleep <ms>, log hook-end
#   lab-hook fail         log hook-start, then fail at once (exit 1)
# A POSIX shell script so that its own start-up costs a few milliseconds, not a Node.js start:
# "sleep 3000" is a 3 s hook. Kubernetes keeps no exec hook output, so the lines go to the
# container's log: PID 1's stdout inside a container, or the file named by LAB_HOOK_LOG (the
# simulated kubelet's container log file). Each line has the lab server's JSON shape
# (server/events.ts): event, time, mono, pid, podUid, podName, then the hook's own fields;
# mono is ms since the hook's first clock reading.
: "${PATH:=/usr/local/bin:/usr/bin:/bin}"
export PATH

usage() {
  printf 'lab-hook: %s\nusage: lab-hook sleep <ms> | lab-hook fail\n' "$1" >&2
  exit 2
}

WORK_MS_MAX=600000
log_target=${LAB_HOOK_LOG:-/proc/1/fd/1}

# Sets clock_iso (UTC, milliseconds) and clock_ms (epoch ms). GNU and BusyBox date know %N;
# BSD date (macOS) prints it as "N", and then perl, which macOS ships, reads the clock.
read_clock() {
  set -- $(date -u '+%Y-%m-%dT%H:%M:%S %s %N')
  case ${3:-} in
    [0-9][0-9][0-9]*) millis=$(printf '%.3s' "$3") ;;
    *) set -- $(perl -MTime::HiRes=time -MPOSIX=strftime -e '$t = time; printf "%s %d %03d\n", strftime("%Y-%m-%dT%H:%M:%S", gmtime($t)), $t, ($t - int($t)) * 1000' 2>/dev/null || date -u '+%Y-%m-%dT%H:%M:%S %s 000')
       millis=$3 ;;
  esac
  clock_iso="$1.${millis}Z"
  clock_ms="$2$millis"
}

# Only characters that need no JSON escaping are copied from the environment.
json_field() {
  case $2 in
    '' | *[!A-Za-z0-9._-]*) ;;
    *) printf ',"%s":"%s"' "$1" "$2" ;;
  esac
}
identity="$(json_field podUid "${POD_UID:-}")$(json_field podName "${POD_NAME:-}")"

# The hook's age in ms (10 ms steps): now minus its process's creation, both counted from boot in
# /proc's fixed 100 ticks a second. Not the time the runtime took to decide and ask for the exec, but
# everything after the process was made (in a container that includes runc init's own set-up).
# Shell builtins only, no other program; nothing where there is no /proc (macOS).
proc_age_field() {
  [ -r /proc/uptime ] && [ -r "/proc/$$/stat" ] || return 0
  read -r uptime _ </proc/uptime
  read -r stat <"/proc/$$/stat"
  set -- ${stat##*) }  # from field 3 on: the command name, in parentheses, may hold spaces
  [ $# -ge 20 ] || return 0
  shift 19             # field 22, starttime
  case $uptime in *.[0-9][0-9]) ;; *) return 0 ;; esac
  uptime_ticks=${uptime%.*}${uptime#*.}
  uptime_ticks=${uptime_ticks#"${uptime_ticks%%[!0]*}"}
  case ${1:-} in '' | *[!0-9]*) return 0 ;; esac
  printf ',"procAgeMs":%d' $(( (${uptime_ticks:-0} - $1) * 10 ))
}

log_event() {
  read_clock
  : "${first_ms:=$clock_ms}"
  line=$(printf '{"event":"%s","time":"%s","mono":%d,"pid":%d%s,"kind":"exec"%s}' \
    "$1" "$clock_iso" "$((clock_ms - first_ms))" "$$" "$identity" "$2")
  # The sleep is the hook's job; its lines are extra evidence. If the log cannot be opened,
  # say so on stderr and go on.
  if ! { printf '%s\n' "$line" >>"$log_target"; } 2>/dev/null; then
    printf 'lab-hook: cannot append to the container log %s; going on without logging\n' "$log_target" >&2
  fi
}

case ${1:-} in
  sleep)
    ms=${2:-}
    case $ms in '' | *[!0-9]*) usage "ms must be a whole number of milliseconds, got \"$ms\"" ;; esac
    ms=${ms#"${ms%%[!0]*}"}  # no leading zeros: shells read them as octal
    ms=${ms:-0}
    [ "${#ms}" -le 6 ] && [ "$ms" -le "$WORK_MS_MAX" ] || usage "ms must be between 0 and $WORK_MS_MAX, got $2"
    log_event hook-start ",\"ms\":$ms$(proc_age_field)"
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    log_event hook-end ",\"ms\":$ms"
    ;;
  fail)
    log_event hook-start ",\"fail\":true$(proc_age_field)"
    printf 'lab-hook: failing at once, as asked\n' >&2
    exit 1
    ;;
  *) usage "unknown command \"${1:-}\"" ;;
esac
