import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  dockerfileArgs,
  goStringConstants,
  imageName,
  imageTag,
  kubeadmImages,
  makeVariable,
  tomlString,
} from '../../../e2e/providers/kind/node/sources.ts';

describe('kind node sources', () => {
  it("read the storage images from kind's const_storage.go", () => {
    const source = [
      'package nodeimage',
      '',
      'const storageProvisionerImage = "docker.io/kindest/local-path-provisioner:v20251212-v0.29.0-alpha-105-g20ccfc88"',
      'const storageHelperImage = "docker.io/kindest/local-path-helper:v20251211-v0.29.0-alpha-100-g82a92c5d"',
      '',
      'var defaultStorageImages = []string{storageProvisionerImage, storageHelperImage}',
      'const defaultStorageManifest = `',
      'image: ` + storageProvisionerImage + `',
    ].join('\n');
    assert.deepEqual(goStringConstants(source), {
      storageProvisionerImage:
        'docker.io/kindest/local-path-provisioner:v20251212-v0.29.0-alpha-105-g20ccfc88',
      storageHelperImage: 'docker.io/kindest/local-path-helper:v20251211-v0.29.0-alpha-100-g82a92c5d',
    });
  });

  it("read the versions kind's base image builds from its Dockerfile", () => {
    const dockerfile = [
      'ARG BASE_IMAGE=debian:bookworm-slim',
      'FROM $BASE_IMAGE AS base',
      'ARG TARGETARCH GO_VERSION',
      'ARG CONTAINERD_VERSION="v2.2.0"',
      'ARG BUILDTAGS="no_aufs no_zfs no_btrfs no_devmapper"',
      '    ARG RUNC_VERSION="v1.2.9"',
    ].join('\n');
    assert.deepEqual(dockerfileArgs(dockerfile), {
      BASE_IMAGE: 'debian:bookworm-slim',
      CONTAINERD_VERSION: 'v2.2.0',
      BUILDTAGS: 'no_aufs no_zfs no_btrfs no_devmapper',
      RUNC_VERSION: 'v1.2.9',
    });
  });

  it('read make variables however they are assigned', () => {
    assert.equal(makeVariable('# v\nVERSION=v0.0.32\nEXTRA=1\n', 'VERSION'), 'v0.0.32');
    assert.equal(makeVariable('TAG ?= 3.10.2\nREV = x\n', 'TAG'), '3.10.2');
    assert.equal(makeVariable('TAG := 1\n', 'TAG'), '1');
    assert.equal(makeVariable('OTHER_TAG=2\n', 'TAG'), undefined);
  });

  it("read the sandbox image from kind's containerd config", () => {
    const toml = [
      '[plugins."io.containerd.grpc.v1.cri"]',
      '  # use fixed sandbox image',
      '  sandbox_image = "registry.k8s.io/pause:3.10"',
    ].join('\n');
    assert.equal(tomlString(toml, 'sandbox_image'), 'registry.k8s.io/pause:3.10');
    assert.equal(tomlString(toml, 'snapshotter'), undefined);
  });

  it('name and tag image references', () => {
    assert.equal(imageName('registry.k8s.io/coredns/coredns:v1.14.2'), 'coredns');
    assert.equal(imageName('docker.io/kindest/local-path-helper:v1'), 'local-path-helper');
    assert.equal(imageName('localhost:5000/pause:3.10'), 'pause');
    assert.equal(imageTag('registry.k8s.io/etcd:3.6.8-0'), '3.6.8-0');
    assert.equal(imageTag('localhost:5000/pause:3.10'), '3.10');
    assert.throws(() => imageTag('localhost:5000/pause'), /has no tag/);
  });

  it("key kubeadm's image list by image name", () => {
    const json = JSON.stringify({
      kind: 'Images',
      apiVersion: 'output.kubeadm.k8s.io/v1alpha3',
      images: [
        'registry.k8s.io/kube-apiserver:v1.36.3',
        'registry.k8s.io/coredns/coredns:v1.14.2',
        'registry.k8s.io/pause:3.10.2',
        'registry.k8s.io/etcd:3.6.8-0',
      ],
    });
    assert.deepEqual(kubeadmImages(json), {
      'kube-apiserver': 'registry.k8s.io/kube-apiserver:v1.36.3',
      coredns: 'registry.k8s.io/coredns/coredns:v1.14.2',
      pause: 'registry.k8s.io/pause:3.10.2',
      etcd: 'registry.k8s.io/etcd:3.6.8-0',
    });
    assert.throws(() => kubeadmImages('{"images": [1]}'), /unexpected kubeadm images list/);
  });
});
