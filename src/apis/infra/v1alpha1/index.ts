export * from './group.ts';
export * from './machine.ts';
export * from './machine-schema.ts';
export * from './podmachine.ts';
export * from './podmachine-schema.ts';
export * from './restore-source.ts';
export {
  type JobOutcome,
  jobOutcome,
  VOLUME_COPY_COMMAND,
  VOLUME_COPY_USER,
  volumeCopyPodTemplate,
} from './volume-copy.ts';
export * from './volumebackup.ts';
export * from './volumebackup-schema.ts';
