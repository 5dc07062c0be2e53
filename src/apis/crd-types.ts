// apiextensions.k8s.io/v1 CustomResourceDefinition, as plain JSON. (The client library's model
// classes rename the x-kubernetes-* fields, so they cannot describe a manifest written to disk.)
import type { JsonSchemaProps } from './json-schema.ts';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

export interface ScaleSubresource {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath?: string;
}

export interface CustomResourceDefinitionVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly schema: { readonly openAPIV3Schema: JsonSchemaProps };
  readonly subresources: {
    readonly status?: Record<string, never>;
    readonly scale?: ScaleSubresource;
  };
  readonly additionalPrinterColumns?: readonly PrinterColumn[];
}

export interface CustomResourceDefinition {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'CustomResourceDefinition';
  readonly metadata: {
    readonly name: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly group: string;
    readonly names: {
      readonly kind: string;
      readonly listKind: string;
      readonly plural: string;
      readonly singular: string;
      readonly shortNames?: readonly string[];
      readonly categories?: readonly string[];
    };
    readonly scope: 'Namespaced' | 'Cluster';
    readonly versions: readonly CustomResourceDefinitionVersion[];
  };
}
