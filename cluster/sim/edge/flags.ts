// Traefik's static configuration from its command line, for the flags the edge's manifest passes
// (manifests/edge/traefik.yaml). Traefik refuses a flag it does not know; so does the sim's edge, naming it.

export interface EdgeConfig {
  /** entryPoints.NAME.address: the port each entry point listens on. */
  entryPoints: Map<string, number>;
  gateway: { statusService: { name: string; namespace: string } | null } | null;
  ingress: { ingressClass: string | null; publishedService: string | null } | null;
  accessLog: boolean;
  /** accesslog.fields.headers.names.NAME=keep: request headers logged as request_NAME. */
  keptHeaders: string[];
  ping: boolean;
  /** providers.providersThrottleDuration: 2 s by default (traefik cmd/configuration.go:27). */
  throttleMs: number;
  /** serversTransport.forwardingTimeouts.dialTimeout: 30 s by default (traefik config/static/static_config.go). */
  dialTimeoutMs: number;
}

export class EdgeFlagError extends Error {}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)?$/;

function durationMs(flag: string, value: string): number {
  const m = DURATION.exec(value);
  if (!m) throw new EdgeFlagError(`${flag}: expected a duration such as 2s or 500ms, got ${JSON.stringify(value)}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

/** Traefik's flags are case-insensitive (paerser): compared in lower case. */
export function parseEdgeArgs(args: string[]): EdgeConfig {
  const config: EdgeConfig = {
    entryPoints: new Map(),
    gateway: null,
    ingress: null,
    accessLog: false,
    keptHeaders: [],
    ping: false,
    throttleMs: 2000,
    dialTimeoutMs: 30_000,
  };
  let statusName = '';
  let statusNamespace = '';
  for (const arg of args) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new EdgeFlagError(`${JSON.stringify(arg)}: expected --name or --name=value`);
    const key = m[1]!.toLowerCase();
    const value = m[2] ?? 'true';
    let ep: RegExpExecArray | null;
    let header: RegExpExecArray | null;
    if ((ep = /^entrypoints\.([^.]+)\.address$/.exec(key))) {
      const port = /^[^:]*:(\d+)$/.exec(value);
      if (!port) throw new EdgeFlagError(`--${m[1]}: expected [host]:port, got ${JSON.stringify(value)}`);
      config.entryPoints.set(ep[1]!, Number(port[1]));
    } else if (key === 'providers.kubernetesgateway') config.gateway ??= { statusService: null };
    else if (key === 'providers.kubernetesingress') config.ingress ??= { ingressClass: null, publishedService: null };
    else if (key === 'providers.kubernetesingress.ingressclass')
      (config.ingress ??= { ingressClass: null, publishedService: null }).ingressClass = value;
    else if (key === 'providers.kubernetesingress.ingressendpoint.publishedservice')
      (config.ingress ??= { ingressClass: null, publishedService: null }).publishedService = value;
    else if (key === 'providers.kubernetesgateway.statusaddress.service.name') statusName = value;
    else if (key === 'providers.kubernetesgateway.statusaddress.service.namespace') statusNamespace = value;
    else if (key === 'accesslog') config.accessLog = value !== 'false';
    else if (key === 'accesslog.format') {
      if (value !== 'json') throw new EdgeFlagError(`--${m[1]}: the sim's edge writes only the json format`);
    } else if (key === 'accesslog.fields.headers.defaultmode') {
      if (value !== 'drop') throw new EdgeFlagError(`--${m[1]}: the sim's edge supports only drop`);
    } else if ((header = /^accesslog\.fields\.headers\.names\.(.+)$/.exec(key))) {
      // The header's name as written: Traefik logs it under request_<Name as given>.
      if (value === 'keep') config.keptHeaders.push(m[1]!.slice('accesslog.fields.headers.names.'.length));
      void header;
    } else if (key === 'ping') config.ping = value !== 'false';
    else if (key === 'log.level' || key === 'global.checknewversion' || key === 'global.sendanonymoususage')
      // No call-outs in the sim: the version check and the usage report do nothing whatever their value.
      continue;
    else if (key === 'providers.providersthrottleduration') config.throttleMs = durationMs(`--${m[1]}`, value);
    else if (key === 'serverstransport.forwardingtimeouts.dialtimeout')
      config.dialTimeoutMs = durationMs(`--${m[1]}`, value);
    else
      throw new EdgeFlagError(
        `--${m[1]}: not a flag the simulated cluster's Traefik knows (cluster/sim/edge/flags.ts)`,
      );
  }
  if (config.gateway && (statusName || statusNamespace))
    config.gateway.statusService = { name: statusName, namespace: statusNamespace };
  if (!config.entryPoints.size) throw new EdgeFlagError('--entryPoints.NAME.address: no entry point given');
  return config;
}
