// kstatus prints what sigs.k8s.io/cli-utils' kstatus (the library behind kubectl wait's kstatus
// mode, Helm's --wait and Flux's health checks) computes for Kubernetes objects. It reads JSON from
// stdin: objects or lists (`kubectl get ... -o json`), one after another, and writes one JSON line
// per object: {apiVersion, kind, namespace, name, status, message, conditions}.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type result struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Namespace  string             `json:"namespace,omitempty"`
	Name       string             `json:"name"`
	Status     string             `json:"status"`
	Message    string             `json:"message"`
	Conditions []status.Condition `json:"conditions"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(in)
	enc := json.NewEncoder(out)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading JSON: %w", err)
		}
		objects, err := objectsOf(raw)
		if err != nil {
			return err
		}
		for _, u := range objects {
			res, err := status.Compute(u)
			if err != nil {
				return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
			}
			conditions := res.Conditions
			if conditions == nil {
				conditions = []status.Condition{}
			}
			if err := enc.Encode(result{
				APIVersion: u.GetAPIVersion(),
				Kind:       u.GetKind(),
				Namespace:  u.GetNamespace(),
				Name:       u.GetName(),
				Status:     res.Status.String(),
				Message:    res.Message,
				Conditions: conditions,
			}); err != nil {
				return err
			}
		}
	}
}

// objectsOf decodes an object or a list with apimachinery's JSON rules (integers stay int64, as
// kstatus reads generation and observedGeneration).
func objectsOf(raw json.RawMessage) ([]*unstructured.Unstructured, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("reading JSON: %w", err)
	}
	if strings.HasSuffix(head.Kind, "List") {
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(bytes.TrimSpace(raw)); err != nil {
			return nil, fmt.Errorf("reading a %s: %w", head.Kind, err)
		}
		objects := make([]*unstructured.Unstructured, 0, len(list.Items))
		for i := range list.Items {
			objects = append(objects, &list.Items[i])
		}
		return objects, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(bytes.TrimSpace(raw)); err != nil {
		return nil, fmt.Errorf("reading an object: %w", err)
	}
	return []*unstructured.Unstructured{u}, nil
}
