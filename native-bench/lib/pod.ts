/**
 * The benchmark workload's objects: Kubernetes-like Pods of about 2 KiB of
 * JSON (metadata with labels, annotations and an owner reference; a spec
 * with two containers; a status with conditions), so that encode and copy
 * costs are those of real watch traffic.
 */
import type { KubeObject } from '../../src/index.js';

export interface PodOptions {
  namespace?: string;
  /** Nodes the pods spread over (spec.nodeName = node-<i % nodes>). */
  nodes?: number;
}

/** Pod number `i`; metadata.name = pod-<i>. */
export function makePod(i: number, options: PodOptions = {}): KubeObject {
  const ns = options.namespace ?? 'default';
  const nodes = options.nodes ?? 100;
  const app = `app-${i % 17}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: ns,
      name: `pod-${i}`,
      labels: {
        app,
        tier: i % 3 === 0 ? 'db' : 'web',
        'pod-template-hash': '7d9f8c6b5d',
        release: 'stable',
        team: `team-${i % 5}`,
      },
      annotations: {
        'kubernetes.io/config.seen': '2026-09-30T12:00:00.000000000Z',
        'kubernetes.io/config.source': 'api',
        'prometheus.io/scrape': 'true',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-7d9f8c6b5d`,
          uid: '5f0c2a8e-8a0b-4c4e-9d61-3c1a2b7e9f10',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: `node-${i % nodes}`,
      serviceAccountName: 'default',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      containers: [0, 1].map((c) => ({
        name: c === 0 ? 'main' : 'sidecar',
        image: c === 0 ? `registry.example.com/${app}:v1.${i % 9}.3` : 'registry.example.com/envoy:v1.29.1',
        ports: [{ containerPort: 8080 + c, protocol: 'TCP', name: c === 0 ? 'http' : 'admin' }],
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'LOG_LEVEL', value: 'info' },
          { name: 'FEATURE_FLAGS', value: 'alpha,beta,gamma' },
        ],
        resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
        volumeMounts: [
          { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
        ],
      })),
      volumes: [
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
          },
        },
      ],
    },
    status: {
      phase: 'Running',
      hostIP: `10.0.${(i >> 8) & 255}.${i & 255}`,
      podIP: `10.244.${(i >> 8) & 255}.${i & 255}`,
      startTime: '2026-09-30T12:00:00Z',
      conditions: ['Initialized', 'Ready', 'ContainersReady'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: '2026-09-30T12:00:05Z',
      })),
    },
  };
}

/**
 * The same pod with bench annotations (sequence number and send time): the
 * body of an update. metadata.resourceVersion is left out (no precondition).
 */
export function podUpdate(base: KubeObject, seq: number, sendMs: number): KubeObject {
  const meta = base.metadata;
  const annotations = { ...(meta.annotations ?? {}), 'bench/seq': String(seq), 'bench/t': sendMs.toFixed(4) };
  const { resourceVersion: _rv, ...rest } = meta;
  return { ...base, metadata: { ...rest, annotations } };
}

/** JSON size of a pod in bytes. */
export function podBytes(pod: KubeObject): number {
  return Buffer.byteLength(JSON.stringify(pod));
}
