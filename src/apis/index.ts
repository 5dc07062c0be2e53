// The public API of src/apis: types, names, schemas, CRDs and validators of our custom resources.
export * from './apps/v1alpha1/index.ts';
export type * from './crd-types.ts';
export * from './crds.ts';
export * from './infra/contract/index.ts';
export * from './infra/v1alpha1/index.ts';
export type * from './json-schema.ts';
export * from './meta.ts';
export { RULES, type RuleId } from './rules.ts';
export * from './validation.ts';
