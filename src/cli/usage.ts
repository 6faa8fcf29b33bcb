/** Help texts of the `watchcache` command and its subcommands. */

export const MAIN_USAGE = `Usage: watchcache <command> [options]

Commands:
  serve      Serve the Kubernetes list/watch API (HTTP/1.1, h2c and TLS)
  bench      Benchmarks: every mode side by side, the floor, and real peers
  simulate   The simulator: the real engine on a virtual clock, scenarios and sweeps

Run 'watchcache <command> --help' for the options of a command.
`;

export const SERVE_USAGE = `Usage: watchcache serve [options]

Serves the Kubernetes list/watch API for the given resources over HTTP/1.1
and HTTP/2 (h2c with prior knowledge on the same port; TLS with --tls-cert
and --tls-key). One watch cache and one store per resource.

Options:
  --host HOST                   Address to bind (default 127.0.0.1)
  --port N                      Port (default 8080; 0 = any free port)
  --mode off|alpha|beta         Slow-watcher policy (default beta)
  --store memory|etcd           Backing store (default memory)
  --etcd URL                    etcd endpoint for --store etcd (default http://127.0.0.1:2379)
  --resources LIST              Comma-separated resources (default pods), e.g. pods,configmaps
  --token TOKEN                 Require "Authorization: Bearer TOKEN" (except /healthz, /readyz, /livez)
  --channel-capacity N          Per-watcher channel size (default: Kubernetes' heuristic)
  --history-upper-bound N       History upper bound in events (default 102400)
  --bookmark-frequency-ms N     Bookmark period per watcher (default 60000)
  --tls-cert FILE               PEM certificate (with --tls-key): serve HTTPS (h2 and http/1.1 via ALPN)
  --tls-key FILE                PEM private key
  --max-watches N               Concurrent watches allowed (default 100000); more get 429
  --idle-timeout-ms N           Close idle HTTP/1.1 keep-alive connections and HTTP/2 sessions
                                with no open stream after N ms (default 90000)
  --header-timeout-ms N         HTTP/1.1 request headers must arrive within N ms (default 60000)
  --request-timeout-ms N        Non-watch requests (body included) time out after N ms with a
                                504 Status (default 60000)
  --min-request-timeout S       A watch without timeoutSeconds lasts S x (1 + rand) seconds
                                (default 1800, as kube-apiserver)
  --max-connection-buffer-bytes N
                                Response bytes a connection may have buffered (a client not
                                reading) before the writing response is ended (default 33554432)
  --max-server-buffer-bytes N   The same for the whole server (default 268435456)
  --log-level LEVEL             trace|debug|info|warn|error|fatal|silent (default info); logs go to
                                stderr, JSON lines when stderr is not a terminal
  --request-log                 Log every request (method, path, status, duration) at info
  -h, --help                    Show this help

SIGTERM or SIGINT: stop accepting, end every watch cleanly, stop the caches, exit 0.
`;
