// The sim serves HTTPS: kubectl sends a kubeconfig's token only to an https:// server
// (client-go's clientcmd reads user credentials only for a secure server). Each start makes its
// own key and self-signed certificate for 127.0.0.1, handed to clients as the kubeconfig's CA.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const CERTIFICATE_DAYS = 7;

export interface ServingCertificate {
  /** PEM private key; never leaves this process. */
  key: string;
  /** PEM certificate, also the CA a client must trust. */
  cert: string;
}

export async function selfSignedCertificate(): Promise<ServingCertificate> {
  // mkdtemp makes the folder 0700, so the key is never readable by anyone else.
  const dir = await mkdtemp(join(tmpdir(), 'termlab-sim-tls-'));
  try {
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      String(CERTIFICATE_DAYS),
      '-subj',
      '/CN=termlab-sim',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]).catch((error: NodeJS.ErrnoException) => {
      throw new Error(
        `the simulated cluster makes its TLS certificate with openssl: ${error.code === 'ENOENT' ? 'openssl is not installed' : error.message}`,
      );
    });
    const [key, cert] = await Promise.all([
      readFile(join(dir, 'key.pem'), 'utf8'),
      readFile(join(dir, 'cert.pem'), 'utf8'),
    ]);
    return { key, cert };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
