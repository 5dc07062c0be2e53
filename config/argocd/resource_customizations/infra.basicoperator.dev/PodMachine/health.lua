-- Argo CD health of a PodMachine (infra.basicoperator.dev): Healthy when Ready, Degraded on a
-- terminal failure (failureReason, the Stalled condition), Suspended once stopped on request.
-- Helpers (each script stands alone: Argo CD takes one script per kind).
local function condition(type)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function notObserved()
  if obj.status == nil or obj.status.observedGeneration == nil then
    return "Waiting for the controller to report status"
  end
  if obj.metadata.generation ~= nil and obj.status.observedGeneration < obj.metadata.generation then
    return "Waiting for the controller to observe generation " .. obj.metadata.generation
  end
  return nil
end

local function result(status, message)
  return { status = status, message = message or "" }
end

local waiting = notObserved()
if waiting ~= nil then
  return result("Progressing", waiting)
end
if obj.status.stopped == true then
  return result("Suspended", "PodMachine is stopped: the pod is gone, the claims are kept")
end
local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  return result("Degraded", stalled.reason .. ": " .. stalled.message)
end
local ready = condition("Ready")
if ready ~= nil and ready.status == "True" then
  return result("Healthy", ready.message)
end
if ready ~= nil then
  return result("Progressing", ready.reason .. ": " .. ready.message)
end
return result("Progressing", "Waiting for the pod and its claims")
