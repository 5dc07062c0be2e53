// Wrapper module: gopher-lua, the Lua VM Argo CD runs resource health scripts in.
module basicoperator.dev/toolchain/argocd-lua

go 1.26.0

require github.com/yuin/gopher-lua v1.1.1
