export * from './group.ts';
export * from './machine.ts';
export * from './machine-schema.ts';
export * from './volumebackup.ts';
export * from './volumebackup-schema.ts';
