def eat_chips_on_the_sofa():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: grab the chips
	find('chips')
	assert('close' to 'chips' )
		else: find('chips')
	grab('chips')
	# 2: walk to the sofa
	walk('livingroom')
	find('sofa')
	# 3: sit on the sofa
	assert('chips' in 'hands' )
		else: find('chips')
		else: grab('chips')
	assert('close' to 'sofa' )
		else: find('sofa')
	sit('sofa')
	# 4: Done
