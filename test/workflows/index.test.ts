// The contract's workflows are exactly the worker's: workflows/index.ts exports every workflow that
// src/temporal/contracts.ts declares in WorkflowSignatures, no other, each with exactly the declared
// signature; and WORKFLOW_TYPES names each of them. Checked by the compiler (this file does not build when
// they drift: the error names the workflow) and, for the names, at run time against what the worker registers.
import { expect } from 'chai';
import * as workflows from '../../workflows';
import { WORKFLOW_TYPES, type RetrieverQueryInput, type WorkflowSignatures } from '../../src/temporal/contracts';

/** True when A and B are the same type (not merely assignable either way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

type Exported = typeof workflows;
type Declared = WorkflowSignatures;
type Named = (typeof WORKFLOW_TYPES)[keyof typeof WORKFLOW_TYPES];

/** Workflows the worker registers that the contract does not declare. */
type Undeclared = Exclude<keyof Exported, keyof Declared>;
/** Workflows the contract declares that the worker does not register. */
type Unregistered = Exclude<keyof Declared, keyof Exported>;
/** The name K when the exported signature E is not the declared D. */
type DriftOf<E, D, K = 'drifted'> = Same<E, D> extends true ? never : K;
/** Workflows whose exported signature is not the declared one. */
type Drifted = { [K in keyof Declared & keyof Exported]: DriftOf<Exported[K], Declared[K], K> }[keyof Declared &
  keyof Exported];
/** Declared workflows that WORKFLOW_TYPES does not name (the other way round, `satisfies` in the contract checks). */
type Unnamed = Exclude<keyof Declared, Named>;

/** Compiles only for an empty union; otherwise the error names its members. */
const none = <T extends never>(): T[] => [];

export const typeChecks = [none<Undeclared>(), none<Unregistered>(), none<Drifted>(), none<Unnamed>()];

// The checks catch drift (an unused @ts-expect-error fails the build).
// @ts-expect-error a workflow the contract does not declare
none<Exclude<keyof Exported | 'ghostWorkflow', keyof Declared>>();
type ResultOnly = (input: RetrieverQueryInput) => Promise<'DONE'>;
// @ts-expect-error a signature that drifted (a narrower result)
none<DriftOf<ResultOnly, Declared['retrieverQueryWorkflow']>>();

describe('the contract names exactly the workflows the worker registers', () => {
  it('WORKFLOW_TYPES lists every workflow the worker registers, and nothing else', () => {
    const registered = Object.entries(workflows)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name);
    expect(Object.keys(workflows)).to.have.members(registered); // workflows/index exports workflows only
    expect([...Object.values(WORKFLOW_TYPES)].sort()).to.deep.equal(registered.sort());
  });

  it('passes the compile-time checks', () => {
    expect(typeChecks.flat()).to.deep.equal([]);
  });
});
