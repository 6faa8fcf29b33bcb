/** The harness uses the simulator's seeded PRNG (mulberry32): every run is reproducible from its seed. */
export { Prng } from '../../src/sim/prng.js';
