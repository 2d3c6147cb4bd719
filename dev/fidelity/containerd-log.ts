// containerd's own record of the SIGKILLs a container got: when a StopContainer's timeout runs out, its CRI plugin
// logs "Kill container" (containerd 1.6 pkg/cri/server/container_stop.go stopContainer) and sends SIGKILL; when the
// kernel kills it for its memory limit, the cgroup's OOM event reaches the CRI plugin as "TaskOOM event" (events.go)
// within milliseconds. The ids are tied to pods by the sandbox and container creations it logs before.
// containerd 2 logs the same lines (internal/cri/server/container_stop.go, events.go), its CRI metadata and
// events printed as protobuf text (`name:\"lab\" uid:\"…\"`, `container_id:\"…\"`) where 1.6 printed Go structs.
import { existsSync, readFileSync } from 'node:fs';

const TIME = /^time="([^"]+)"/;
// Each names the pod (or container) name, its UID (sandboxes only) and the id, in that order, in either version's form.
const SANDBOX = [
  /RunPodSandbox for &PodSandboxMetadata\{Name:([^,]+),Uid:([^,]+),.*returns sandbox id \\"([0-9a-f]+)\\"/,
  /RunPodSandbox for name:\s*\\"([^"\\]+)\\"\s+uid:\s*\\"([^"\\]+)\\".*returns sandbox id \\"([0-9a-f]+)\\"/,
];
const CONTAINER = [
  /CreateContainer within sandbox \\"([0-9a-f]+)\\" for &ContainerMetadata\{Name:([^,]+),.*returns container id \\"([0-9a-f]+)\\"/,
  /CreateContainer within sandbox \\"([0-9a-f]+)\\" for name:\s*\\"([^"\\]+)\\".*returns container id \\"([0-9a-f]+)\\"/,
];
const KILL = /msg="Kill container \\"([0-9a-f]+)\\""/;
const OOM = [
  /msg="TaskOOM event &TaskOOM\{ContainerID:([0-9a-f]+),/,
  /msg="TaskOOM event container_id:\s*\\"([0-9a-f]+)\\"/,
];
const first = (patterns: RegExp[], line: string) => patterns.map((p) => p.exec(line)).find(Boolean) ?? null;

/** `${podUID}/${container name}` -> wall ms of containerd's first "Kill container" or "TaskOOM event" line for it. */
export function containerdKills(logPath: string): Map<string, number> {
  const kills = new Map<string, number>();
  if (!existsSync(logPath)) return kills;
  const podOfSandbox = new Map<string, string>();
  const keyOfContainer = new Map<string, string>();
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    const sandbox = first(SANDBOX, line);
    if (sandbox) {
      podOfSandbox.set(sandbox[3]!, sandbox[2]!);
      continue;
    }
    const container = first(CONTAINER, line);
    if (container) {
      const uid = podOfSandbox.get(container[1]!);
      if (uid) keyOfContainer.set(container[3]!, `${uid}/${container[2]}`);
      continue;
    }
    const kill = KILL.exec(line) ?? first(OOM, line);
    const key = kill && keyOfContainer.get(kill[1]!);
    const time = key && TIME.exec(line);
    if (key && time && !kills.has(key)) kills.set(key, Date.parse(time[1]!));
  }
  return kills;
}
