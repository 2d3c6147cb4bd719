// npm run generate:protobuf — writes cluster/sim/protobuf-types.json, the protobuf messages the
// simulated cluster decodes (protobuf-body.ts), from Kubernetes' own API definitions in the Go module
// cache: each package's generated.proto (parsed by protobufjs) and, for the JSON shape Go gives the
// same object, its Go structs' field tags (json name, omitempty, inline) and pointer-ness. Kubernetes
// is Apache-2.0; the file names its source, version and licence. Nothing else is copied.
//   usage: tsx cluster/sim/protobuf-generate.ts [--modcache DIR] [--check]
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { writeFileAtomic } from '../../lib/files.ts';
import { packagePath } from '../../lib/package-root.ts';
import { CUSTOM_JSON } from './protobuf-json.ts';
import { RESOURCES } from './resources.ts';

export const K8S_MODULE_VERSION = 'v0.37.2';
export const TYPES_FILE = packagePath('cluster/sim/protobuf-types.json');

/** The Go package (module, folder) of each API group's version v1. */
const GROUP_PACKAGE: Record<string, string> = {
  '': 'api/core/v1',
  apps: 'api/apps/v1',
  'discovery.k8s.io': 'api/discovery/v1',
  'networking.k8s.io': 'api/networking/v1',
  'rbac.authorization.k8s.io': 'api/rbac/v1',
  autoscaling: 'api/autoscaling/v1',
};
/** Custom resources have no protobuf (the API server takes JSON for them, and kubectl sends JSON). */
export const JSON_ONLY_GROUPS = new Set(['gateway.networking.k8s.io']);
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Bodies besides the served kinds: DeleteOptions (any group's DELETE) and the scale subresource's Scale. */
const EXTRA_KINDS = [
  { apiVersion: '*', kind: 'DeleteOptions', message: `${META}.DeleteOptions` },
  { apiVersion: 'autoscaling/v1', kind: 'Scale', message: 'k8s.io.api.autoscaling.v1.Scale' },
];

interface GoField {
  json: string;
  omitempty: boolean;
  omitzero: boolean;
  inline: boolean;
  pointer: boolean;
}

/** k8s.io.api.apps.v1 -> <modcache>/k8s.io/api@v/apps/v1 */
function packageDir(modcache: string, protoPackage: string): string {
  const [, , module, ...rest] = protoPackage.split('.');
  return join(modcache, 'k8s.io', `${module}@${K8S_MODULE_VERSION}`, ...rest);
}

/** Every struct of a Go package: field number (from the protobuf tag) -> its JSON tag and pointer-ness. */
function goStructs(dir: string): Map<string, Map<number, GoField>> {
  const structs = new Map<string, Map<number, GoField>>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
      const fields = new Map<number, GoField>();
      for (const line of m[2]!.split('\n')) {
        // `Name Type `tags`` or an embedded `Type `tags``.
        const f = /^\t(?:(\w+)\s+)?(\S+)\s+`([^`]*)`/.exec(line);
        if (!f) continue;
        const proto = /protobuf:"[a-z0-9]+,(\d+),/.exec(f[3]!);
        const json = /json:"([^"]*)"/.exec(f[3]!);
        if (!proto || !json) continue;
        const [name = '', ...options] = json[1]!.split(',');
        fields.set(Number(proto[1]), {
          json: name,
          omitempty: options.includes('omitempty'),
          omitzero: options.includes('omitzero'),
          pointer: f[2]!.startsWith('*'),
          // An embedded struct with no JSON name (or ",inline") has its fields spliced into the parent.
          inline: f[1] === undefined && (name === '' || options.includes('inline')),
        });
      }
      structs.set(m[1]!, fields);
    }
  }
  return structs;
}

function roots() {
  const kinds = Object.values(RESOURCES)
    .filter((r) => !JSON_ONLY_GROUPS.has(r.group))
    .map((r) => {
      const dir = GROUP_PACKAGE[r.group];
      if (!dir)
        throw new Error(
          `protobuf-generate: no Go package known for API group ${JSON.stringify(r.group)} (${r.kind}): add it to GROUP_PACKAGE`,
        );
      return {
        apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
        kind: r.kind,
        message: `k8s.io.${dir.replaceAll('/', '.')}.${r.kind}`,
      };
    });
  return [...kinds, ...EXTRA_KINDS];
}

export function generate(modcache: string): string {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    const m = /^k8s\.io\/([a-z-]+)\/(.*)$/.exec(target);
    if (!m) return target;
    return join(modcache, 'k8s.io', `${m[1]}@${K8S_MODULE_VERSION}`, m[2]!);
  };
  const kinds = roots();
  const files = new Set(
    kinds.map((k) =>
      k.message.startsWith(META)
        ? 'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto'
        : `k8s.io/${k.message.split('.').slice(2, -1).join('/')}/generated.proto`,
    ),
  );
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();

  // The messages reachable from the kinds, and nothing else.
  const reachable = new Map<string, protobuf.Type>();
  const visit = (type: protobuf.Type) => {
    const name = type.fullName.slice(1);
    if (reachable.has(name)) return;
    reachable.set(name, type);
    for (const field of type.fieldsArray) if (field.resolvedType instanceof protobuf.Type) visit(field.resolvedType);
  };
  visit(root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'));
  for (const k of kinds) visit(root.lookupType(k.message));

  const nested: Record<string, any> = {};
  const json: Record<string, Record<string, string>> = {};
  const structsByPackage = new Map<string, Map<string, Map<number, GoField>>>();
  for (const [name, type] of [...reachable].sort(([a], [b]) => a.localeCompare(b))) {
    const parts = name.split('.');
    let at = nested;
    for (const part of parts.slice(0, -1)) at = (at[part] ??= { nested: {} }).nested;
    at[parts.at(-1)!] = type.toJSON(); // keeps "edition": "proto2", so a zero that was sent stays present
    if (
      CUSTOM_JSON.has(name) ||
      name === 'k8s.io.apimachinery.pkg.runtime.Unknown' ||
      name === 'k8s.io.apimachinery.pkg.runtime.TypeMeta'
    )
      continue;
    const protoPackage = parts.slice(0, -1).join('.');
    if (!structsByPackage.has(protoPackage))
      structsByPackage.set(protoPackage, goStructs(packageDir(modcache, protoPackage)));
    const struct = structsByPackage.get(protoPackage)!.get(parts.at(-1)!);
    if (!struct)
      throw new Error(`protobuf-generate: message ${name} has no Go struct in ${packageDir(modcache, protoPackage)}`);
    const shape: Record<string, string> = {};
    for (const field of type.fieldsArray) {
      const go = struct.get(field.id);
      if (!go)
        throw new Error(
          `protobuf-generate: ${name}.${field.name} (${field.id}) has no Go field with that protobuf number`,
        );
      // A Go-tag-like string: "*" for a pointer, then the JSON name, ",omitempty", ",omitzero", ",inline".
      shape[field.name] =
        `${go.pointer ? '*' : ''}${go.inline ? '' : go.json}${go.omitempty ? ',omitempty' : ''}${go.omitzero ? ',omitzero' : ''}${go.inline ? ',inline' : ''}`;
    }
    json[name] = shape;
  }
  const document = {
    source: `generated by cluster/sim/protobuf-generate.ts from k8s.io/api@${K8S_MODULE_VERSION} and k8s.io/apimachinery@${K8S_MODULE_VERSION} (generated.proto and the Go types' field tags)`,
    license: 'Apache-2.0 (Copyright The Kubernetes Authors); see http://www.apache.org/licenses/LICENSE-2.0',
    kinds: Object.fromEntries(kinds.map((k) => [`${k.apiVersion} ${k.kind}`, k.message])),
    json,
    protobuf: { nested },
  };
  return `${JSON.stringify(document, null, 1)}\n`;
}

function goModCache(argv: string[]): string {
  const i = argv.indexOf('--modcache');
  if (i >= 0 && argv[i + 1]) return argv[i + 1]!;
  return process.env.GOMODCACHE || execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const modcache = goModCache(argv);
  if (!existsSync(join(modcache, 'k8s.io', `api@${K8S_MODULE_VERSION}`))) {
    console.error(
      `generate:protobuf: k8s.io/api@${K8S_MODULE_VERSION} is not in the Go module cache ${modcache}: run \`go mod download k8s.io/api@${K8S_MODULE_VERSION} k8s.io/apimachinery@${K8S_MODULE_VERSION}\` in a Go module first`,
    );
    process.exit(2);
  }
  const text = generate(modcache);
  if (argv.includes('--check')) {
    const same = existsSync(TYPES_FILE) && readFileSync(TYPES_FILE, 'utf8') === text;
    console.log(
      same
        ? `${TYPES_FILE} is up to date`
        : `${TYPES_FILE} differs from what the Go module cache gives: run npm run generate:protobuf`,
    );
    process.exit(same ? 0 : 1);
  }
  await writeFileAtomic(TYPES_FILE, text);
  console.log(`wrote ${TYPES_FILE}`);
}
