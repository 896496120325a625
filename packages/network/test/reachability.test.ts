/**
 * The reachability matrix with STAND-IN guests (namespaces wired in the
 * tap's place, see `support/stand-in-guest.ts`): real namespaces, real
 * nftables rules, real routing; only the VM is replaced.
 *
 * @module
 */
import { defineReachabilityMatrix } from './support/reachability-matrix.js';
import { StandInGuests } from './support/stand-in-guest.js';

defineReachabilityMatrix((lab) => new StandInGuests(lab));
