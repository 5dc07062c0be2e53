export * from './basicdeployment.ts';
export * from './basicdeployment-schema.ts';
export * from './basicreplicaset.ts';
export * from './basicreplicaset-schema.ts';
export * from './group.ts';
export * from './workload.ts';
