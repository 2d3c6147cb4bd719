// containerd's "Kill container" and "TaskOOM event" lines, tied to a pod's UID and container name through the sandbox
// and container it created (lines as the v1.37.2 node's containerd 1.6.20 wrote them, 2026-12-02 and 2026-12-03).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerdKills } from '../../dev/fidelity/containerd-log.ts';

const SB = '3debeae01ff9f0eeb6e2f294517be83a4cb5f5e0a49190328fb0cbaa68b8d78a';
const LAB = '3125923f3ed137829f54bff3fda87f0bef0c573bf9f00c7fe92d6d9271cc310f';
const PROXY = '226844bb22b8d774e628ad5285896f8ef31575d74ca016f1af5ab48c05165a26';
const OTHER = 'a0ae9f0245182b5d927d38bbd25a19ae360eacb86a0153558cd7781c0209371c';
const LOG = [
  `time="2026-12-02T19:10:42.640008062Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:tl-short-grace-c81d,Uid:86fbb842-c073-44e6-8246-509ea8441bb6,Namespace:default,Attempt:0,} returns sandbox id \\"${SB}\\""`,
  `time="2026-12-02T19:10:42.766216496Z" level=info msg="CreateContainer within sandbox \\"${SB}\\" for &ContainerMetadata{Name:lab,Attempt:0,} returns container id \\"${LAB}\\""`,
  `time="2026-12-02T19:10:42.866216496Z" level=info msg="CreateContainer within sandbox \\"${SB}\\" for &ContainerMetadata{Name:proxy,Attempt:0,} returns container id \\"${PROXY}\\""`,
  `time="2026-12-02T19:10:45.125218867Z" level=info msg="StopContainer for \\"${LAB}\\" with timeout 3 (s)"`,
  `time="2026-12-02T19:10:48.143497669Z" level=info msg="Kill container \\"${LAB}\\""`,
  `time="2026-12-02T19:10:49.143497669Z" level=info msg="Kill container \\"${LAB}\\""`,
  `time="2026-12-02T19:10:50.915552067Z" level=info msg="Kill container \\"${OTHER}\\""`,
].join('\n');
const OOM_SB = 'da32002f05cc84983e8e1016a57fb3ea0fecc43ede46eb0743718c66917d2fae';
const OOM_LAB = '573ec24e3b8729d151628ebc9e7e9e1249b1973e8a42459ae5bd48cc97bf27ee';
const OOM_LOG = [
  `time="2026-12-03T11:28:34.503280222Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:tl-oom-on-term-0c4a,Uid:9a058bfd-af0d-40ca-bd68-e4ba41c0dece,Namespace:default,Attempt:0,} returns sandbox id \\"${OOM_SB}\\""`,
  `time="2026-12-03T11:28:34.535801247Z" level=info msg="CreateContainer within sandbox \\"${OOM_SB}\\" for &ContainerMetadata{Name:lab,Attempt:0,} returns container id \\"${OOM_LAB}\\""`,
  `time="2026-12-03T11:28:40.027060606Z" level=info msg="TaskOOM event &TaskOOM{ContainerID:${OOM_LAB},XXX_unrecognized:[],}"`,
  `time="2026-12-03T11:28:40.115916311Z" level=info msg="Container to stop \\"${OOM_LAB}\\" must be in running or unknown state, current state \\"CONTAINER_EXITED\\""`,
].join('\n');

describe("containerd's log of its kills", () => {
  it("dates each container's first SIGKILL by its pod's UID and its name, and nothing it did not kill", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'termlab-containerd-')), 'containerd.log');
    writeFileSync(path, `${LOG}\n`);
    const kills = containerdKills(path);
    expect([...kills]).toEqual([['86fbb842-c073-44e6-8246-509ea8441bb6/lab', Date.parse('2026-12-02T19:10:48.143Z')]]);
    expect(kills.has('86fbb842-c073-44e6-8246-509ea8441bb6/proxy')).toBe(false);
    expect(containerdKills(join(path, '..', 'absent.log')).size).toBe(0);
  });

  it("dates a container the kernel killed for its memory by containerd's OOM event", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'termlab-containerd-')), 'containerd.log');
    writeFileSync(path, `${OOM_LOG}\n`);
    expect([...containerdKills(path)]).toEqual([
      ['9a058bfd-af0d-40ca-bd68-e4ba41c0dece/lab', Date.parse('2026-12-03T11:28:40.027Z')],
    ]);
  });

  it("reads containerd 2.4's protobuf-text lines the same way (the v1.37.2 node on containerd v2.4.2, 2026-12-06)", () => {
    const sb = '298d62a964393dc6f59e1d974043f0fe5c5e6db03447d088ffcfecef4ee6796a';
    const lab = '2eb20913306972d3a7b9a7b8d942b46c07193b3bba0bec8ae7745c9e20709c12';
    const oomSb = '823cf2580c026d1c74b5d850b01f50af8e1ff9278b6fe3c1c38ea28e5c00cc91';
    const oomLab = '21fb667a9b6f2cc9ed82030d97ff0fd12b0b82051ea0b80b17fde17058c2694d';
    const log = [
      `time="2026-12-06T21:49:41.010000000Z" level=info msg="RunPodSandbox for name:\\"tl-short-grace-1a2b\\" uid:\\"0b5e6a51-5a57-4c5e-9c38-2f0f4b1b7a10\\" namespace:\\"default\\" returns sandbox id \\"${sb}\\""`,
      `time="2026-12-06T21:49:41.130493320Z" level=info msg="CreateContainer within sandbox \\"${sb}\\" for name:\\"lab\\" returns container id \\"${lab}\\""`,
      `time="2026-12-06T21:49:50.637542798Z" level=info msg="Kill container \\"${lab}\\""`,
      `time="2026-12-06T21:50:33.198427873Z" level=info msg="RunPodSandbox for name:\\"oomcheck\\" uid:\\"5708050f-fb70-4407-badf-144327efb0af\\" namespace:\\"default\\" returns sandbox id \\"${oomSb}\\""`,
      `time="2026-12-06T21:50:33.288976039Z" level=info msg="CreateContainer within sandbox \\"${oomSb}\\" for name:\\"lab\\" returns container id \\"${oomLab}\\""`,
      `time="2026-12-06T21:50:34.027543826Z" level=info msg="TaskOOM event container_id:\\"${oomLab}\\""`,
    ].join('\n');
    const path = join(mkdtempSync(join(tmpdir(), 'termlab-containerd-')), 'containerd.log');
    writeFileSync(path, `${log}\n`);
    expect([...containerdKills(path)]).toEqual([
      ['0b5e6a51-5a57-4c5e-9c38-2f0f4b1b7a10/lab', Date.parse('2026-12-06T21:49:50.637Z')],
      ['5708050f-fb70-4407-badf-144327efb0af/lab', Date.parse('2026-12-06T21:50:34.027Z')],
    ]);
  });
});
