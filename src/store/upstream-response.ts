/**
 * The HTTP code an upstream answered a write with (KubeStore), kept beside the returned object
 * so the server can answer with the same code (a kube-apiserver answers 202 Accepted to a delete
 * that waits for finalizers, 201 to a create). A WeakMap: objects are not changed.
 */
const codes = new WeakMap<object, number>();

/** Remember `code` for `object` and return the object. */
export function rememberUpstreamCode<T extends object>(object: T, code: number): T {
  if (object !== null && typeof object === 'object') codes.set(object, code);
  return object;
}

/** The upstream's code for an object a store returned (undefined: not from an upstream). */
export function upstreamCodeOf(object: object): number | undefined {
  return codes.get(object);
}
