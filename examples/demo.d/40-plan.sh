# step: usdgrip plan — collision-checked grasps for the mug and the tote (Isaac-Grasp YAML)
for object in mug:/Mug tote:/Tote; do
    name=${object%%:*}
    prim=${object#*:}
    echo "\$ usdgrip plan examples/$name.usda --object $prim --gripper examples/gripper.usda:/Gripper/tcp -o out/${name}_grasps.yaml --show 4"
    usdgrip plan "examples/$name.usda" --object "$prim" \
        --gripper examples/gripper.usda:/Gripper/tcp \
        --max-candidates 50 --seed 0 -o "out/${name}_grasps.yaml" --show 4 2>/dev/null
done
echo "\$ head -n 18 out/mug_grasps.yaml"
head -n 18 out/mug_grasps.yaml
