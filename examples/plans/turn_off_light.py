def turn_off_light():
	# 0: walk to living room
	walk('livingroom')
	# 1: find the light switch
	find('lightswitch')
	assert('close' to 'lightswitch' )
		else: find('lightswitch')
	# 2: switch off the light
	assert('lightswitch' is 'switchon' )
		else: switchon('lightswitch')
	switchoff('lightswitch')
	# 3: Done
