/**
 * A throwaway self-signed certificate for 127.0.0.1 and localhost (1 day,
 * RSA 2048), made with openssl into `dir`; or, when openssl is missing, the
 * reason to give the skipped test.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export function makeSelfSignedCert(dir: string): { cert: string; key: string } | string {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    return 'openssl is not installed (apt-get install -y openssl)';
  }
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'];
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', ...subject],
    {
      stdio: 'ignore',
    },
  );
  return { cert, key };
}
