// argocd-lua runs an Argo CD resource health script (health.lua) the way Argo CD's controller runs a
// script from argocd-cm (util/lua in argoproj/argo-cd): gopher-lua with the standard libraries
// skipped except package, base and table, the object as the global `obj` (numbers as Lua numbers),
// a one-second limit, and a returned table whose `status` must be one of Argo CD's health codes.
//
//	argocd-lua health.lua < objects.json
//
// stdin holds objects or lists (`kubectl get ... -o json`), one after another; for each object it
// writes one JSON line: {kind, namespace, name, status, message}.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

type result struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

var healthCodes = map[string]bool{
	"Unknown": true, "Progressing": true, "Suspended": true, "Healthy": true, "Degraded": true, "Missing": true,
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd-lua health.lua < objects.json")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = run(string(script), os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-lua:", err)
		os.Exit(1)
	}
}

func run(script string, in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(in)
	enc := json.NewEncoder(out)
	for {
		var value map[string]interface{}
		if err := dec.Decode(&value); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading JSON: %w", err)
		}
		objects := []map[string]interface{}{value}
		if kind, _ := value["kind"].(string); strings.HasSuffix(kind, "List") {
			objects = objects[:0]
			items, _ := value["items"].([]interface{})
			for _, item := range items {
				if o, ok := item.(map[string]interface{}); ok {
					objects = append(objects, o)
				}
			}
		}
		for _, obj := range objects {
			status, message, err := health(script, obj)
			meta, _ := obj["metadata"].(map[string]interface{})
			kind, _ := obj["kind"].(string)
			namespace, _ := meta["namespace"].(string)
			name, _ := meta["name"].(string)
			if err != nil {
				return fmt.Errorf("%s %s/%s: %w", kind, namespace, name, err)
			}
			if err := enc.Encode(result{Kind: kind, Namespace: namespace, Name: name, Status: status, Message: message}); err != nil {
				return err
			}
		}
	}
}

func health(script string, obj map[string]interface{}) (string, string, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return "", "", err
	}
	returned, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("expect table output from Lua script, not %s", l.Get(-1).Type())
	}
	status := lua.LVAsString(returned.RawGetString("status"))
	message := lua.LVAsString(returned.RawGetString("message"))
	if !healthCodes[status] {
		// What Argo CD shows for a status it does not know.
		return "Unknown", "Lua returned an invalid health status", nil
	}
	return status, message, nil
}

// toLua converts decoded JSON as Argo CD's decodeValue does: objects and arrays become tables,
// numbers Lua numbers, null nil.
func toLua(l *lua.LState, value interface{}) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []interface{}:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]interface{}:
		t := l.CreateTable(0, len(v))
		for key, item := range v {
			t.RawSetH(lua.LString(key), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

