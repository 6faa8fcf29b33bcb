/**
 * A request routed to one served resource: the collection (name undefined)
 * or one object, in one namespace (namespace set), in all namespaces
 * (namespace undefined, collections only), or cluster-scoped (namespace '').
 */
import type { RequestLike, ResponseLike } from './http-types.js';
import type { ServedResource } from './served-resource.js';

export interface ResourceRequest {
  readonly req: RequestLike;
  readonly res: ResponseLike;
  readonly served: ServedResource;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly params: URLSearchParams;
}
