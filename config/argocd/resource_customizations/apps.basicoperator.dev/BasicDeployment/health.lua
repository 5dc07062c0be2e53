-- Argo CD health of a BasicDeployment (apps.basicoperator.dev): as Argo CD's own Deployment check,
-- paused is Suspended, a rollout past its progress deadline is Degraded (the Stalled condition).
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

if obj.spec ~= nil and obj.spec.paused == true then
  return result("Suspended", "BasicDeployment is paused")
end
local waiting = notObserved()
if waiting ~= nil then
  return result("Progressing", waiting)
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
  return result("Progressing", ready.message)
end
return result("Progressing", "Waiting for rollout to finish")
