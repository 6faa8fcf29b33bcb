// A @kubernetes/client-node informer on `npx watchcache serve`: prints one
// line per add / update / delete of a pod in the default namespace.
//
//   node examples/informer.mjs [http://127.0.0.1:8080]
//
// client-node 2.x needs Node >= 22.19 through its undici 8; on Node 20 this
// project's package.json has `"overrides": { "undici": "^7.16.0" }`, which
// makes it load (see README). An informer stops on any error but a 410 (it
// re-lists on those by itself), so this one starts again after a second.
import * as k8s from '@kubernetes/client-node';

const server = process.argv[2] ?? 'http://127.0.0.1:8080';
const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'watchcache', server, skipTLSVerify: true }], // http:// needs skipTLSVerify
  users: [{ name: 'anonymous' }],
  contexts: [{ name: 'watchcache', cluster: 'watchcache', user: 'anonymous', namespace: 'default' }],
  currentContext: 'watchcache',
});
const core = kc.makeApiClient(k8s.CoreV1Api);
const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () => core.listNamespacedPod({ namespace: 'default' }));
const show = (verb) => (pod) => console.log(`${verb} ${pod.metadata?.name} (resourceVersion ${pod.metadata?.resourceVersion})`);
informer.on('add', show('added'));
informer.on('update', show('updated'));
informer.on('delete', show('deleted'));
let stopping = false;
informer.on('error', (err) => {
  if (stopping) return; // stop() reports an AbortError too
  console.error(`informer stopped: ${err?.message ?? err}; starting again in 1 s`);
  setTimeout(() => informer.start().catch(() => {}), 1000);
});
process.on('SIGTERM', () => {
  stopping = true;
  informer.stop().finally(() => process.exit(0));
});
await informer.start();
console.log(`watching pods in default on ${server}`);
