// Types the two workload kinds share.
import type { V1PodSpec } from '@kubernetes/client-node';

/** An integer, or a percentage string such as "25%". */
export type IntOrString = number | string;

/** The pod metadata a template may set; other metadata fields are pruned by the apiserver. */
export interface PodTemplateMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface PodTemplate {
  metadata?: PodTemplateMetadata;
  spec: V1PodSpec;
}
