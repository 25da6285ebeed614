def watch_tv():
	# 0: walk to living room
	walk('livingroom')
	# 1: grab the remote control
	find('remotecontrol')
	assert('close' to 'remotecontrol' )
		else: find('remotecontrol')
	grab('remotecontrol')
	# 2: switch on the tv
	find('tv')
	assert('close' to 'tv' )
		else: find('tv')
	assert('tv' is 'switchoff' )
		else: switchoff('tv')
	switchon('tv')
	# 3: sit on the sofa
	find('sofa')
	assert('close' to 'sofa' )
		else: find('sofa')
	sit('sofa')
	# 4: watch tv
	assert('tv' is 'switchon' )
		else: switchon('tv')
	watch('tv')
	# 5: Done
