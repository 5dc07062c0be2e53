-- Argo CD health of a VolumeBackup (infra.basicoperator.dev): Healthy once Completed, Degraded once
-- Failed (its attempts or its deadline used up, or abandoned), Progressing before.
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

local ready = condition("Ready")
local message = ""
if ready ~= nil then
  message = ready.message
end
-- Completed and Failed are final (a VolumeBackup's spec never changes): no generation to wait for.
if obj.status ~= nil and obj.status.phase == "Completed" then
  return result("Healthy", message)
end
if obj.status ~= nil and obj.status.phase == "Failed" then
  return result("Degraded", ready ~= nil and (ready.reason .. ": " .. message) or "Failed")
end
local waiting = notObserved()
if waiting ~= nil then
  return result("Progressing", waiting)
end
return result("Progressing", message)
