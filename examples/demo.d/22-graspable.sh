# step: SimReady graspable prop — grasp vector lines listed, checked (one misses on purpose) and planned
echo "\$ usdgrip info examples/graspable_prop.usda"
usdgrip info examples/graspable_prop.usda
echo "\$ usdgrip validate examples/graspable_prop.usda"
usdgrip validate examples/graspable_prop.usda && status=0 || status=$?
echo "(exit $status: grasp_identifier_02 misses the block, GP.001, as intended)"
echo "\$ usdgrip plan examples/graspable_prop.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp --method lines -o out/graspable_prop.yaml"
usdgrip plan examples/graspable_prop.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp \
    --method lines -o out/graspable_prop.yaml
